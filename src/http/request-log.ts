/**
 * One record per request, kept beside the Request object: filled by authentication, the
 * route and the chat core (through the CallTrace port, core/model/trace.ts), and written as ONE
 * JSON line when the request is over: after the answer, or for a stream when the stream has
 * ended and been settled (a client that hung up included). The same record drives the
 * request's trace when OTLP export is configured (src/http/tracing.ts); with neither on,
 * no record exists and every hook is a no-op. See docs/observability.md.
 */
import type { AttemptRecord, CallTrace, PhaseEnd } from "../core/model/trace";
import type { Usage } from "../core/model/types";
import { lineTime, logEnabled, writeJsonLine } from "../lib/log";
import type { RefusalFolder } from "./refusal-log";

export type AttrValue = string | number | boolean;
export type Attrs = Record<string, AttrValue | undefined>;

/** One span of a request's trace (src/http/tracing.ts implements it over OpenTelemetry). */
export interface TraceSpan {
  set(attrs: Attrs): void;
  rename(name: string): void;
  /** The W3C traceparent naming this span, for a request it makes. */
  traceparent(): string;
  end(error?: string): void;
}

/** Starts spans; loaded only when traces are exported. */
export interface RequestTracer {
  /** The request's root span, continuing the client's `traceparent` when it sent one. */
  begin(request: Request, name: string): TraceSpan;
  child(parent: TraceSpan, name: string, attrs?: Attrs): TraceSpan;
  /** Exports every ended span now. */
  flush(): Promise<void>;
  shutdown(): Promise<void>;
}

export interface RequestLogOptions {
  /** LOG_REQUESTS: write the line. */
  lines: boolean;
  /** Folds floods of refusals (./refusal-log.ts); absent: every request writes its line. */
  refusals?: RefusalFolder;
  tracer: RequestTracer | null;
}

const records = new WeakMap<Request, RequestRecord>();
const NOOP: PhaseEnd = () => {};

export class RequestRecord implements CallTrace {
  route = "unmatched";
  status = 200;
  keyId?: string;
  accountId?: string;
  /** The client's address: the socket peer, or X-Forwarded-For past TRUSTED_PROXIES only (Authenticator.clientIp). */
  clientIp?: string;
  model?: string;
  provider?: string | null;
  responseModel?: string;
  attempts?: AttemptRecord[];
  usage?: Usage;
  costKrw?: number;
  cached?: boolean;
  error?: string;
  ttfbMs?: number;
  stream?: "open" | "complete" | "failed" | "client_left";
  /** Things still to end before the line is written: the answer, a body stream, a core stream. */
  private waits = 1;
  private root?: TraceSpan;
  private spans?: Map<AttemptRecord, TraceSpan>;
  private streamSpan?: TraceSpan;

  constructor(
    readonly request: Request,
    readonly id: string,
    readonly start: number,
    private o: RequestLogOptions,
  ) {
    if (o.tracer) this.root = o.tracer.begin(request, request.method);
  }

  /** The authenticated caller (never its secret). */
  /** Whether the request is traced (its phases become spans). */
  get traced(): boolean {
    return this.root !== undefined;
  }

  caller(accountId: string, keyId?: string): void {
    this.accountId = accountId;
    if (keyId) this.keyId = keyId;
  }

  requested(model: string): void {
    this.model = model;
  }

  phase(name: "authorize" | "hold" | "settle"): PhaseEnd {
    if (!this.root) return NOOP;
    const span = this.o.tracer!.child(this.root, name);
    return (error) => span.end(error);
  }

  attempt(provider: string, model: string): AttemptRecord {
    const rec: AttemptRecord = { provider, model };
    (this.attempts ??= []).push(rec);
    if (this.root) {
      const span = this.o.tracer!.child(this.root, `chat ${model}`, {
        "gen_ai.operation.name": "chat",
        "gen_ai.system": provider,
        "gen_ai.provider.name": provider,
        "gen_ai.request.model": model,
        "gateway.attempt": this.attempts.length,
      });
      rec.traceparent = span.traceparent();
      (this.spans ??= new Map()).set(rec, span);
    }
    return rec;
  }

  attemptEnded(rec: AttemptRecord): void {
    const span = this.spans?.get(rec);
    if (!span) return;
    this.spans!.delete(rec);
    span.set({
      "gateway.attempt.outcome": rec.outcome,
      "error.type": rec.reason,
      "http.response.status_code": rec.status,
    });
    span.end(rec.outcome === "ok" ? undefined : rec.reason);
  }

  answered(model: string, provider: string | null, usage: Usage, costKrw: number, opts: { cached: boolean }): void {
    this.responseModel = model;
    this.provider = provider;
    this.usage = usage;
    this.costKrw = costKrw;
    this.cached = opts.cached;
  }

  streamOpened(): void {
    this.stream = "open";
    this.waits++;
    if (this.root) this.streamSpan = this.o.tracer!.child(this.root, "stream");
  }

  streamEnded(ending: "complete" | "failed" | "client_left", error?: string): void {
    this.stream = ending;
    if (ending === "client_left") this.status = 499;
    else if (ending === "failed") this.error ??= error ?? "upstream_error";
    if (this.streamSpan) {
      this.streamSpan.set({ "gateway.stream.ending": ending, "gateway.ttfb_ms": this.ttfbMs });
      this.streamSpan.end(ending === "complete" ? undefined : ending);
    }
    this.release();
  }

  /**
   * Answered before routing (a CORS preflight, a declared body over the limit): Elysia runs
   * no after-response hook for those, so the line is written now. A later release is a no-op.
   */
  answeredEarly(status: number): void {
    this.status = status;
    this.release();
  }

  /** A body stream now carries the answer: the line waits for its end too. */
  hold(): void {
    this.waits++;
  }

  firstByte(): void {
    this.ttfbMs ??= Math.round(performance.now() - this.start);
  }

  release(): void {
    if (--this.waits === 0) this.finish();
  }

  private finish(): void {
    const ms = Math.round(performance.now() - this.start);
    if (this.root) this.endRoot();
    if (!this.o.lines) return;
    const level = this.status >= 500 ? "warn" : "info";
    if (!logEnabled(level)) return;
    // A flood of refusals from one caller: one line a second, the rest counted (./refusal-log.ts).
    // Only a refusal (an error code) can be folded: an answered call builds nothing for it.
    if (
      this.error &&
      this.o.refusals &&
      !this.o.refusals.line({
        method: this.request.method,
        route: this.route,
        status: this.status,
        error: this.error,
        keyId: this.keyId,
        accountId: this.accountId,
      })
    )
      return;
    const u = this.usage;
    // The line's head is the object's first fields: one object, serialized once (lib/log.ts).
    writeJsonLine({
      ts: lineTime(),
      level,
      msg: "request",
      request_id: this.id,
      method: this.request.method,
      route: this.route,
      status: this.status,
      duration_ms: ms,
      client_ip: this.clientIp,
      ttfb_ms: this.ttfbMs,
      stream: this.stream,
      key_id: this.keyId,
      account_id: this.accountId,
      model: this.model,
      response_model: this.responseModel,
      provider: this.provider,
      attempts: this.attempts?.map((a) => ({
        provider: a.provider,
        model: a.model,
        outcome: a.outcome,
        reason: a.reason,
        status: a.status,
        ms: a.ms,
      })),
      tokens: u && { in: u.promptTokens, out: u.completionTokens, cached: u.cachedTokens },
      cost_krw: this.costKrw,
      cache_hit: this.cached,
      error: this.error,
    });
  }

  private endRoot(): void {
    const root = this.root!;
    const u = this.usage;
    root.rename(`${this.request.method} ${this.route}`);
    root.set({
      "http.request.method": this.request.method,
      "http.route": this.route,
      "http.response.status_code": this.status,
      "gateway.request_id": this.id,
      "client.address": this.clientIp,
      "gateway.key_id": this.keyId,
      "gateway.account_id": this.accountId,
      ...(this.model !== undefined
        ? { "gen_ai.operation.name": "chat", "gen_ai.request.model": this.model }
        : undefined),
      "gen_ai.response.model": this.responseModel,
      "gen_ai.system": this.provider ?? undefined,
      "gen_ai.provider.name": this.provider ?? undefined,
      "gen_ai.usage.input_tokens": u?.promptTokens,
      "gen_ai.usage.output_tokens": u?.completionTokens,
      "gateway.usage.cached_tokens": u?.cachedTokens,
      "gateway.cost_krw": this.costKrw,
      "gateway.cache_hit": this.cached,
      "gateway.ttfb_ms": this.ttfbMs,
      "error.type": this.error,
    });
    root.end(this.status >= 500 ? (this.error ?? String(this.status)) : undefined);
  }
}

/** Starts the request's record; none when neither the log line nor traces are on. */
export function beginRecord(
  request: Request,
  id: string,
  start: number,
  o: RequestLogOptions,
): RequestRecord | undefined {
  if (!o.lines && !o.tracer) return undefined;
  const r = new RequestRecord(request, id, start, o);
  records.set(request, r);
  return r;
}

/** The request's record (its CallTrace for the chat core); undefined when not observed. */
export function requestRecord(request: Request): RequestRecord | undefined {
  return records.get(request);
}
