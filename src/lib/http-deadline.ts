/**
 * `fetch` with two deadlines and a caller signal, for upstream calls that may stream.
 *
 * - first byte: from the start of the call until the response headers AND the first body
 *   chunk (or the end of an empty body) have arrived. Bun's own servers only finish the
 *   headers with the first chunk, so "headers" alone would be a weaker promise.
 * - idle: the longest silence between two body chunks after the first. It runs only while
 *   somebody is reading (a slow consumer is not the upstream's fault).
 *
 * Any of the three (first byte, idle, caller abort) aborts the underlying fetch, so the
 * upstream connection is closed. Nothing here leaves a promise rejection unhandled.
 *
 * Errors: {@link DeadlineError} for a passed deadline, the caller signal's `reason` for a
 * caller abort, otherwise whatever fetch or the body reader threw (network errors).
 */
import { concatBytes } from "./bytes";

export type DeadlinePhase = "first_byte" | "idle";

export class DeadlineError extends Error {
  constructor(
    readonly phase: DeadlinePhase,
    readonly ms: number,
  ) {
    super(phase === "first_byte" ? `no response within ${ms} ms` : `stream idle for more than ${ms} ms`);
    this.name = "DeadlineError";
  }
}

export interface DeadlineOptions {
  /** The caller's signal (client gone, gateway gave up). */
  signal?: AbortSignal;
  firstByteTimeoutMs: number;
  idleTimeoutMs: number;
  /** Maps an error before the body stream surfaces it (lets callers type body errors). */
  mapBodyError?: (err: unknown, response?: Response) => unknown;
}

export interface DeadlineResponse {
  /** Status and headers. Do not read `response.body`: read {@link DeadlineResponse.body}. */
  response: Response;
  /** The response body with the deadlines applied; cancelling it aborts the fetch. */
  body: ReadableStream<Uint8Array>;
  /** Aborts the call (the body then errors, if anybody is reading it). */
  abort(reason?: unknown): void;
}

/** Performs `fetch(url, init)` under the deadlines. Resolves once the response headers are in. */
export async function fetchWithDeadlines(
  url: string,
  init: RequestInit,
  opts: DeadlineOptions,
): Promise<DeadlineResponse> {
  const { signal } = opts;
  if (signal?.aborted) throw signal.reason ?? abortError();

  let firstByteTimer: ReturnType<typeof setTimeout> | undefined;
  const call = new CallAbort(signal, () => cleanup());
  const controller = call.controller;
  const abort = (reason?: unknown): void => call.abort(reason);
  const cleanup = (): void => {
    if (firstByteTimer !== undefined) clearTimeout(firstByteTimer);
    firstByteTimer = undefined;
    call.detach();
  };
  firstByteTimer = setTimeout(deadlinePassed, opts.firstByteTimeoutMs, call, "first_byte", opts.firstByteTimeoutMs);

  /** Settles (rejects) when the call is aborted for any reason: raced against every wait. */
  const aborted = new Promise<never>((_, reject) => {
    controller.signal.addEventListener("abort", () => reject(call.reason), { once: true });
  });
  aborted.catch(() => {});

  let response: Response;
  try {
    response = await Promise.race([fetch(url, { ...init, signal: controller.signal }), aborted]);
  } catch (err) {
    cleanup();
    abort(err); // make sure the fetch is gone whatever happened
    throw call.reason !== undefined && call.reason !== err ? call.reason : err;
  }

  const source = response.body;
  if (source === null) {
    cleanup();
    const empty = new ReadableStream<Uint8Array>({ start: (c) => c.close() });
    return { response, body: empty, abort };
  }
  const reader = source.getReader();
  const mapErr = opts.mapBodyError ?? ((e: unknown) => e);
  let first = true;
  let finished = false;
  // The idle deadline: one timer per call, pushed back at each read (refresh) rather than a
  // timer per chunk. It fires only while a read waits, and that read has waited idleTimeoutMs.
  let idleTimer: ReturnType<typeof setTimeout> | undefined;
  let readingSince = -1;
  const idleCheck = (): void => {
    if (readingSince < 0) return; // nobody reading: a slow consumer is not the upstream's fault
    const waited = performance.now() - readingSince;
    if (waited >= opts.idleTimeoutMs) abort(new DeadlineError("idle", opts.idleTimeoutMs));
    else idleTimer = setTimeout(idleCheck, opts.idleTimeoutMs - waited);
  };
  const finish = (): void => {
    finished = true;
    readingSince = -1;
    if (idleTimer !== undefined) clearTimeout(idleTimer);
    cleanup();
  };

  const body = new ReadableStream<Uint8Array>(
    {
      async pull(out) {
        if (!first) {
          readingSince = performance.now();
          if (idleTimer === undefined) idleTimer = setTimeout(idleCheck, opts.idleTimeoutMs);
          else idleTimer.refresh();
        }
        try {
          // An abort (deadline, caller) rejects the pending read itself, with the abort's reason.
          const { done, value } = await reader.read();
          readingSince = -1;
          if (first) {
            first = false;
            if (firstByteTimer !== undefined) clearTimeout(firstByteTimer);
            firstByteTimer = undefined;
          }
          if (done) {
            finish();
            out.close();
          } else {
            out.enqueue(value);
          }
        } catch (err) {
          finish();
          abort(err);
          reader.cancel().catch(() => {});
          out.error(mapErr(call.reason !== undefined ? call.reason : err));
        }
      },
      cancel(reason) {
        if (!finished) finish();
        reader.cancel(reason).catch(() => {});
        abort(reason ?? abortError());
      },
    },
    { highWaterMark: 0 },
  );
  return { response, body, abort };
}

/**
 * `fetch` under the same deadlines and caller signal, reading the whole body: for answers
 * that are not streamed. Same promises as {@link fetchWithDeadlines} + {@link readAllBytes}
 * (first byte = headers and the first body chunk, idle = the longest silence between chunks),
 * except that a body of declared length must be whole within the first-byte deadline,
 * without the wrapping stream and its per-read races, which cost more than the fetch itself
 * on the hot path. Errors: as fetchWithDeadlines; body errors pass through `mapBodyError`.
 */
export async function fetchAllWithDeadlines(
  url: string,
  init: RequestInit,
  opts: DeadlineOptions,
): Promise<{ response: Response; bytes: Uint8Array }> {
  const { signal } = opts;
  if (signal?.aborted) throw signal.reason ?? abortError();
  // No closure per call: the abort is an object (its own listener), the deadlines call a module function.
  const call = new CallAbort(signal);
  let timer: ReturnType<typeof setTimeout> | undefined = setTimeout(
    deadlinePassed,
    opts.firstByteTimeoutMs,
    call,
    "first_byte",
    opts.firstByteTimeoutMs,
  );
  try {
    let response: Response;
    try {
      response = await fetch(url, { ...init, signal: call.controller.signal });
    } catch (err) {
      throw call.why(err);
    }
    // A declared length (how upstreams send a JSON answer): the body is read natively in one go,
    // with no stream, reader or read per chunk, which cost a JSON call about 0.9 KiB. The
    // first-byte deadline then stays armed until the whole body is in: the body must be whole
    // within it (the idle deadline applies between the chunks of an undeclared body only).
    if (response.headers.has("content-length")) {
      try {
        return { response, bytes: await response.bytes() };
      } catch (err) {
        call.abort(err);
        const reason = call.why(err);
        throw opts.mapBodyError ? opts.mapBodyError(reason, response) : reason;
      }
    }
    const reader = response.body?.getReader();
    if (!reader) return { response, bytes: new Uint8Array(0) };
    const parts: Uint8Array[] = [];
    let len = 0;
    try {
      for (;;) {
        const { done, value } = await reader.read();
        clearTimeout(timer);
        timer = undefined;
        if (done) break;
        parts.push(value);
        len += value.length;
        timer = setTimeout(deadlinePassed, opts.idleTimeoutMs, call, "idle", opts.idleTimeoutMs);
      }
    } catch (err) {
      call.abort(err);
      reader.cancel().catch(() => {});
      const reason = call.why(err);
      throw opts.mapBodyError ? opts.mapBodyError(reason, response) : reason;
    }
    return { response, bytes: concatBytes(parts, len) };
  } finally {
    clearTimeout(timer);
    call.detach();
  }
}

/**
 * The call's own abort: follows the caller's signal (as its own listener object, so no closure
 * per call), and remembers why it fired (a deadline or the caller), since read errors after it
 * are reported as that reason. `onAbort` runs first.
 */
class CallAbort {
  readonly controller = new AbortController();
  reason: unknown = undefined;

  constructor(
    private readonly signal: AbortSignal | undefined,
    private readonly onAbort?: () => void,
  ) {
    signal?.addEventListener("abort", this, { once: true });
  }

  /** The caller's signal aborted. */
  handleEvent(): void {
    this.abort(this.signal?.reason ?? abortError());
  }

  abort(reason: unknown): void {
    if (this.controller.signal.aborted) return;
    this.reason = reason;
    this.onAbort?.();
    this.controller.abort(reason);
  }

  detach(): void {
    this.signal?.removeEventListener("abort", this);
  }

  /** A failure after our own abort is reported as the abort's reason (deadline or caller). */
  why(err: unknown): unknown {
    return this.reason !== undefined ? this.reason : err;
  }
}

/** A deadline's timer: module-level, given its call as an argument, so arming it makes no closure. */
function deadlinePassed(call: CallAbort, phase: DeadlinePhase, ms: number): void {
  call.abort(new DeadlineError(phase, ms));
}

/** Reads a whole body (already deadline-wrapped) into one Uint8Array. */
export async function readAllBytes(body: ReadableStream<Uint8Array>): Promise<Uint8Array> {
  const parts: Uint8Array[] = [];
  let len = 0;
  const reader = body.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      parts.push(value);
      len += value.length;
    }
  } finally {
    reader.releaseLock();
  }
  return concatBytes(parts, len);
}

function abortError(): Error {
  return new DOMException("The operation was aborted.", "AbortError");
}
