/**
 * Stream continuation (opt-in, `provider.continue_on_failure`): when a typed stream breaks
 * mid-answer, the next candidate is asked to continue the same answer from the text already
 * sent (continuation-request.ts), and its events follow the first part's in the one stream the
 * surface reads, so the client sees one uninterrupted answer. Each part is recorded here for
 * its bill (continuation-bill.ts). One continuation per call: a continuation that breaks too,
 * or a break that cannot be continued, ends the stream as without the opt-in.
 */
import type { AttemptSuccess } from "./attempts";
import type { Candidate } from "../routing/candidates";
import type { ChatPlan, OpenedStream } from "./plan";
import type { AttemptRecord } from "../model/trace";
import type { ChatMessage, ChatRequest, StreamEvent, Usage } from "../model/types";
import { estimateTokens } from "./estimate";
import { continuationRequest, type ContinuationVia } from "./continuation-request";
import { logUpstreamFailure, upstreamReason } from "../upstream/words";
import { UpstreamError } from "../upstream/error";

export type TypedStream = Extract<OpenedStream, { kind: "typed" }>;

export interface ContinuationPart {
  candidate: Candidate;
  /** The messages this part was asked (its usage estimate counts them when the usage is missing). */
  messages: readonly ChatMessage[];
  /** The text this part delivered. */
  text: string;
  toolCalls: boolean;
  usage: Usage | null;
  /** How a continuing part was asked. */
  via?: ContinuationVia;
}

/** The parts of one streamed answer; more than one once it was continued. */
export class Continuation {
  readonly parts: ContinuationPart[] = [];
  get continued(): boolean {
    return this.parts.length > 1;
  }
  get last(): ContinuationPart | undefined {
    return this.parts.at(-1);
  }
}

/** Opens a typed stream on the first of `candidates` that answers (retries, fallback, circuits), each asked `requestFor(c)`. */
export type OpenContinuation = (
  candidates: Candidate[],
  requestFor: (c: Candidate) => Omit<ChatRequest, "model">,
  signal: AbortSignal,
) => Promise<AttemptSuccess<TypedStream>>;

/** Whether a call may be continued: a stream of free text (a JSON answer cannot be spliced). */
export function continuable(
  stream: boolean,
  prefs: { continue_on_failure?: boolean } | undefined,
  request: Omit<ChatRequest, "model">,
): boolean {
  const format = request.response_format?.type;
  return stream && prefs?.continue_on_failure === true && format !== "json_object" && format !== "json_schema";
}

/** `first`, continued by the next candidate if it breaks mid-answer; its parts go to `plan.continuation`. */
export function continuing(plan: ChatPlan, first: TypedStream, open: OpenContinuation): TypedStream {
  const k = plan.continuation!;
  const abort = new AbortController();
  let current = first;
  abort.signal.addEventListener("abort", () => current.abort.abort(), { once: true });
  k.parts.push({
    candidate: first.candidate,
    messages: plan.upstream.messages,
    text: "",
    toolCalls: false,
    usage: null,
  });

  /** The continuation after `err`, or null when this break ends the stream as without the opt-in. */
  const next = async (
    err: unknown,
    finished: boolean,
  ): Promise<{ stream: TypedStream; trimmedSpace: boolean } | null> => {
    const part = k.last!;
    const rest = plan.candidates.slice(plan.candidates.indexOf(part.candidate) + 1);
    // A break inside a tool call, after the finish, of a continuation, or with the client gone is not continued.
    if (
      k.continued ||
      part.toolCalls ||
      finished ||
      !rest.length ||
      abort.signal.aborted ||
      plan.drain !== undefined ||
      plan.ended
    )
      return null;
    const budget = plan.upstream.max_tokens - estimateTokens(part.text.length);
    if (budget < 1) return null;
    logUpstreamFailure(err, {
      request_id: plan.caller.requestId,
      provider: part.candidate.provider.id,
      continuing: true,
    });
    const asked = new Map<Candidate, ReturnType<typeof continuationRequest>>();
    const requestFor = (c: Candidate) => {
      const r = continuationRequest(plan.upstream, part.text, c.provider.protocol, budget);
      asked.set(c, r);
      return r.request;
    };
    let won: AttemptSuccess<TypedStream>;
    try {
      won = await open(rest, requestFor, abort.signal);
    } catch {
      return null; // no candidate could continue: the original break ends the stream
    }
    if (abort.signal.aborted) {
      won.value.abort.abort();
      return null;
    }
    const r = asked.get(won.candidate)!;
    if (part === k.parts[0] && first.attempt)
      Object.assign(first.attempt, {
        outcome: "continued",
        reason: err instanceof UpstreamError ? `${err.kind}/${upstreamReason(err)}` : "stream_broken",
      } satisfies Partial<AttemptRecord>);
    k.parts.push({
      candidate: won.candidate,
      messages: r.request.messages,
      text: "",
      toolCalls: false,
      usage: null,
      via: r.via,
    });
    return { stream: won.value, trimmedSpace: r.trimmedSpace };
  };

  async function* events(): AsyncGenerator<StreamEvent> {
    let skipSpace = false;
    for (;;) {
      const part = k.last!;
      let finished = false;
      try {
        for await (const ev of current.events) {
          if (ev.type === "text") {
            const text = skipSpace ? ev.text.trimStart() : ev.text;
            if (!text) continue;
            skipSpace = false;
            part.text += text;
            yield text === ev.text ? ev : { type: "text", text };
            continue;
          }
          if (ev.type === "tool_call") part.toolCalls = true;
          else if (ev.type === "finish") finished = true;
          else if (ev.type === "usage") part.usage = ev.usage;
          yield ev;
        }
        return;
      } catch (err) {
        const n = await next(err, finished);
        if (!n) throw err;
        current = n.stream;
        skipSpace = n.trimmedSpace;
      }
    }
  }

  return {
    kind: "typed",
    candidate: first.candidate,
    events: events(),
    abort,
    ...(first.attempt ? { attempt: first.attempt } : undefined),
  };
}
