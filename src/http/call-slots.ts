/**
 * The HTTP side of call admission (core/calls/admission.ts). A model route takes its slot
 * right after authentication with `using`, so every way out of the handler (an answer, a
 * thrown error) gives it back; a streamed answer hands the slot to its body, which gives it
 * back when the stream ends, fails or is cancelled, or when the client goes away.
 *
 * A slot pre-empted by a tenant under its share (admission.ts) stops its call as a client
 * leaving would: the call's signal (callSignalOf, read by callerOf) aborts with the 429 and a
 * streamed answer's body ends.
 *
 * An account without credit never takes a slot of a contended budget (half of it or more in
 * use, or calls waiting): its call is refused 402 `insufficient_credits` first, so free
 * accounts can neither fill the budget nor pre-empt a paying tenant's call. (On a quiet budget
 * the hold's own 402 comes a moment after the slot, before anything is sent upstream.)
 */
import type { KeyPrincipal } from "../core/auth/principal";
import type { CallAdmission, CallSlot } from "../core/calls/admission";
import { GatewayError } from "../core/errors";
import { requestRecord, type RequestRecord } from "./request-log";
import { sseHandleOf, type SseHandle } from "../surfaces/sse-stream";

/** Each admitted request's call signal: the client's, or its slot's pre-emption. */
const callSignals = new WeakMap<Request, AbortSignal>();

/** The signal that stops this request's model call: the client leaving, or its slot pre-empted. */
export function callSignalOf(request: Request): AbortSignal {
  return callSignals.get(request) ?? request.signal;
}

export class CallSlots {
  /** `credit`: the account's free credit in micro-won (balance − held; null for a missing account). */
  constructor(
    readonly admission: CallAdmission,
    private credit?: (userId: string) => Promise<bigint | null>,
  ) {}

  /** A slot for this key's call, or the 402 / 429 / 503 GatewayError. */
  async take(p: KeyPrincipal, request: Request): Promise<HeldSlot> {
    if (this.credit && this.admission.contended && p.kind !== "byok") {
      const free = await this.credit(p.user.id);
      if (free == null || free <= 0n)
        throw new GatewayError("insufficient_credits", undefined, { action: { type: "topup", path: "/billing" } });
    }
    const slot = await this.admission.admit({ userId: p.user.id, keyId: p.keyId }, request.signal);
    // One controller following both (AbortSignal.any on every call is dearer, and held on to).
    const ctl = new AbortController();
    follow(ctl, request.signal);
    slot.forward(ctl);
    callSignals.set(request, ctl.signal);
    return new HeldSlot(slot, ctl.signal, requestRecord(request));
  }
}

/** An abort listener as an object (handleEvent): `ctl` aborts with `source`'s reason, no closure made. */
class Follower {
  constructor(
    private readonly ctl: AbortController,
    private readonly source: AbortSignal,
  ) {}
  handleEvent(): void {
    this.ctl.abort(this.source.reason);
  }
}

const ONCE = { once: true } as const;

function follow(ctl: AbortController, source: AbortSignal): void {
  if (source.aborted) ctl.abort(source.reason);
  else source.addEventListener("abort", new Follower(ctl, source), ONCE);
}

/** The reason CallAdmission.stopAll gives every call of a stopping process (src/boot/shutdown.ts). */
const stopping = (reason: unknown) => reason instanceof GatewayError && reason.errorCode === "service_unavailable";

export class HeldSlot implements Disposable {
  private mine = true;
  constructor(
    private slot: CallSlot,
    private signal: AbortSignal,
    private record?: RequestRecord,
  ) {}

  /**
   * The answer's body keeps the slot until it is done, and the handler's scope leaves it to the body.
   * The request's log line waits for the body's end too, and learns its first byte's time.
   */
  untilEnd(res: Response): Response {
    if (!res.body) return res;
    // An SSE body of ours tells the slot of its first byte and its end itself: no second stream
    // reading it chunk by chunk (a read, a promise and an async pull per chunk).
    const handle = sseHandleOf(res.body);
    if (handle) return this.observed(res, handle);
    const slot = this.slot;
    const rec = this.record;
    const release = this.toBody();
    let first = true;
    const reader = res.body.getReader();
    let ctl: ReadableStreamDefaultController<Uint8Array> | null = null;
    // A client that leaves mid-stream frees the slot at once, whatever the stream still does;
    // a pre-empted stream ends (the reader's cancel is the core's "client left"). A stream of a
    // stopping process is not cut here: the core ends it with its error event (shutdown.ts).
    const stop = () => {
      release();
      const preemption = this.slot.preemption;
      if (preemption !== undefined && !stopping(preemption) && ctl) {
        // Ended without its final event ([DONE], message_stop): the client sees a cut stream.
        try {
          ctl.close();
        } catch {}
        reader.cancel(preemption).catch(() => {});
      }
    };
    this.signal.addEventListener("abort", stop, { once: true });
    const body = new ReadableStream<Uint8Array>({
      start(c) {
        ctl = c;
      },
      async pull(c) {
        try {
          const { done, value } = await reader.read();
          if (done) {
            release();
            c.close();
          } else {
            if (first) {
              first = false;
              rec?.firstByte();
            }
            c.enqueue(value);
          }
        } catch (e) {
          release();
          c.error(e);
        }
      },
      cancel(reason) {
        release();
        return reader.cancel(reason);
      },
    });
    return new Response(body, { status: res.status, statusText: res.statusText, headers: res.headers });
  }

  /**
   * Hands the slot and the log line to the answer's body; the function it returns gives both
   * back (the slot's release is idempotent, the line's is made once).
   */
  private toBody(): () => void {
    this.mine = false;
    const slot = this.slot;
    const rec = this.record;
    rec?.hold();
    let open = true;
    return () => {
      slot.release();
      if (open) {
        open = false;
        rec?.release();
      }
    };
  }

  private observed(res: Response, handle: SseHandle): Response {
    const slot = this.slot;
    const rec = this.record;
    const release = this.toBody();
    // As untilEnd's: the client leaving frees the slot at once; a pre-empted stream is ended
    // without its final event; a stopping process's stream is ended by the core.
    this.signal.addEventListener(
      "abort",
      () => {
        release();
        const preemption = slot.preemption;
        if (preemption !== undefined && !stopping(preemption)) handle.stop();
      },
      ONCE,
    );
    handle.observe({ firstByte: () => rec?.firstByte(), ended: release });
    return res;
  }

  [Symbol.dispose](): void {
    if (this.mine) this.slot.release();
  }
}
