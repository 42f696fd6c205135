/**
 * The end of every streamed chat call, written once for every dialect: the upstream is read to
 * its end (typed events, or a relayed stream's raw bytes), and then, on success, the citations
 * are made, the call settled and the final event handed over; on a failure after the first
 * byte, the upstream is cut and only what was received is billed; when the client left, the
 * upstream is read on for its usage (`streamDrainMs` at most) and billed on what was read. The
 * call's hold is settled or released exactly once (call-bill.ts). A response-cache hit is
 * replayed through the same shape (`cachedStream`). A process that stops ends its open streams
 * itself (`cut`, src/boot/shutdown.ts): the upstream is cut and the stream ends as a failed one,
 * in the gateway's words and with the code `service_unavailable`.
 */
import type { CallSink, CallStream, StreamFinal, StreamHead } from "./call-stream";
import type { CallBill, StreamBill } from "./call-bill";
import type { Candidate } from "../routing/candidates";
import type { ChatDeps } from "./ports";
import type { ChatOutcome, ChatPlan, OpenedStream, StreamEnd } from "./plan";
import { drainTyped, drainedResult } from "./drain";
import { relayEvents } from "./relay-events";
import { failureWords, logUpstreamFailure } from "../upstream/words";
import { citationsOf } from "./web-search-step";
import { text } from "../errors";

/** The last words of a stream the stopping process ended (cut). */
export const SHUTTING_DOWN = text(
  "게이트웨이가 종료 중이어서 스트림을 끝냈습니다. 전달된 부분만 청구됩니다. 다시 시도하세요.",
  "The gateway is shutting down and ended the stream; only the part delivered is billed. Retry the request.",
);

type Opened<K extends OpenedStream["kind"]> = Extract<OpenedStream, { kind: K }>;

export class AnswerStream implements CallStream {
  readonly head: StreamHead;
  private readonly candidate: Candidate;
  /** Forgets this stream in the process's registry of open streams, once it is billed. */
  private readonly forget: () => void;

  constructor(
    private readonly plan: ChatPlan,
    private readonly opened: OpenedStream,
    private readonly d: ChatDeps,
    private readonly bill: CallBill,
  ) {
    this.candidate = opened.candidate;
    this.forget = d.streams?.add(this) ?? (() => {});
    this.head = {
      model: this.candidate.model.id,
      provider: this.candidate.provider.id,
      relayed: opened.kind === "raw",
      cached: false,
      usage: null,
    };
  }

  read(sink: CallSink, gone: () => boolean): Promise<StreamFinal> {
    return this.opened.kind === "raw" ? this.relay(this.opened, sink, gone) : this.typed(this.opened, sink, gone);
  }

  leave(): void {
    leaveStream(this.plan, this.opened, this.d.streamDrainMs ?? 0);
  }

  /**
   * The process is stopping and this stream's time is up: the upstream is cut now, and the
   * read ends as a failed stream does (the part received billed, nothing received released).
   */
  cut(): void {
    if (this.plan.ended) return;
    this.plan.cut = true;
    this.plan.errorCode = "service_unavailable";
    this.opened.abort.abort();
  }

  /** The client's words of a stream's failure: ours when the process ended it. */
  private words(failure: string): { failure: string; code?: "service_unavailable" } {
    if (!this.plan.cut) return { failure };
    return { failure: SHUTTING_DOWN[this.plan.caller.lang ?? "ko"], code: "service_unavailable" };
  }

  private async typed(opened: Opened<"typed">, sink: CallSink, gone: () => boolean): Promise<StreamFinal> {
    const plan = this.plan;
    const mapping = plan.mapping;
    const pii = this.d.pii;
    const restorer = mapping && pii ? () => pii.streamUnmasker(mapping) : null;
    const d = await drainTyped(
      opened.events,
      restorer,
      // Nothing more is written once the stream is cut, and the cut is no upstream failure to log.
      () => gone() || plan.cut === true,
      sink,
      { request_id: plan.caller.requestId, provider: this.candidate.provider.id },
      plan.caller.lang,
    );
    const received = { usage: d.usage, text: d.text, toolCalls: d.calls.filter(Boolean) };
    if (gone()) {
      opened.abort.abort();
      return { kind: "left", ...(await this.close({ ending: "client_left", ...received })) };
    }
    // A cut stream is a failed one, even where the provider's parser took the cut for an end.
    if (!d.failure && !plan.cut) {
      const cites = citationsOf(plan, d.text);
      const { cost, usage, parts } = await this.close({ ending: "complete", ...received, result: drainedResult(d) });
      return { kind: "complete", finish: d.finish, usage, cost, ...cites, ...(parts ? { parts } : undefined) };
    }
    opened.abort.abort();
    return {
      kind: "failed",
      ...this.words(d.failure ?? ""),
      partial: d.text,
      ...(await this.close({ ending: "failed", ...received })),
    };
  }

  private async relay(opened: Opened<"raw">, sink: CallSink, gone: () => boolean): Promise<StreamFinal> {
    const plan = this.plan;
    const scanner = opened.scanner;
    const end = await relayEvents(opened.body, scanner, sink.raw ?? (() => {}), gone, opened.restorer);
    const left = gone();
    const usage = scanner.usage();
    // The text is rebuilt only when something needs it: an estimate, the cache, the citations.
    const needText = !end.complete || !usage || left || plan.cacheMode !== "off" || !!plan.search?.results.length;
    const result = needText ? scanner.result() : undefined;
    const received = { usage, text: result?.content ?? "", toolCalls: result?.toolCalls ?? [] };
    const relay = scanner.tail();
    if (end.complete && !left) {
      if (result && usage) result.usage = usage;
      const bill = await this.close({ ending: "complete", ...received, result });
      return {
        kind: "complete",
        finish: result?.finishReason ?? "stop",
        usage: bill.usage,
        cost: bill.cost,
        ...citationsOf(plan, result?.content ?? null),
        relay,
      };
    }
    opened.abort.abort();
    if (left) return { kind: "left", ...(await this.close({ ending: "client_left", ...received })) };
    // The client reads our words; the provider's own go to the operator's log.
    if (!plan.cut)
      logUpstreamFailure(end.error, { request_id: plan.caller.requestId, provider: this.candidate.provider.id });
    return {
      kind: "failed",
      ...this.words(failureWords(end.error, plan.caller.lang)),
      partial: received.text,
      ...(await this.close({ ending: "failed", ...received })),
      relay,
    };
  }

  /** Bills the stream's end (its usage or, without it, an estimate; a continued stream, each part). Never throws. */
  private async close(end: StreamEnd): Promise<StreamBill> {
    const plan = this.plan;
    const trace = plan.caller.trace;
    const bill = await this.bill.closeStream(plan, this.candidate, end);
    this.forget();
    if (trace) {
      const answered =
        plan.policy?.outcome?.candidate ??
        (plan.continuation?.continued ? plan.continuation.last!.candidate : this.candidate);
      trace.answered(answered.model.id, answered.provider.id, bill.usage, Number(bill.cost.micro) / 1e6, {
        cached: false,
      });
      trace.streamEnded(end.ending, plan.cut ? "service_unavailable" : undefined);
    }
    return bill;
  }
}

/**
 * The client hung up on an open stream. Nothing more reaches it, but the upstream is still
 * read for its usage (it comes last) for `drainMs` at most, then cut. A client could otherwise
 * leave right before the usage and pay an estimate of the visible text, or leave before any
 * content and pay nothing, for a call the provider bills.
 */
export function leaveStream(plan: ChatPlan, opened: OpenedStream, drainMs: number): void {
  if (plan.ended || plan.drain) return;
  if (drainMs <= 0) opened.abort.abort();
  else plan.drain = setTimeout(() => opened.abort.abort(), drainMs);
}

/** A response-cache hit, replayed as a stream: its answer at once, billed nothing. */
export function cachedStream(o: ChatOutcome): CallStream {
  return {
    head: { model: o.model, provider: o.provider, relayed: false, cached: true, usage: o.result.usage },
    async read(sink) {
      if (o.result.content) sink.text(o.result.content);
      o.result.toolCalls?.forEach((call, index) =>
        sink.toolCall(
          { type: "tool_call", index, id: call.id, name: call.function.name, arguments: call.function.arguments },
          { ...call, function: { ...call.function } },
        ),
      );
      return { kind: "complete", finish: o.result.finishReason, usage: o.result.usage, cost: o.cost };
    },
    leave() {},
  };
}
