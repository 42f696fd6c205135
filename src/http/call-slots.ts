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
import { sseHandleOf } from "../surfaces/sse-stream";

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
    // Admitted at once in the usual case: no promise of the admission's to wait on.
    const who = { userId: p.user.id, keyId: p.keyId };
    const slot =
      this.admission.admitNow(who, request.signal) ?? (await this.admission.admitWaiting(who, request.signal));
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
   * The answer's body keeps the slot until it is done, and the handler's scope leaves it to the
   * body. The request's log line waits for the body's end too, and learns its first byte's time.
   * Every streamed answer is an SSE body of ours (sseStream), which tells the slot of its first
   * byte and its end itself: no second stream reads it chunk by chunk. A client that leaves
   * frees the slot at once; a pre-empted stream is ended without its final event (the core reads
   * on as for a client that left); a stopping process's stream is ended by the core.
   */
  untilEnd(res: Response): Response {
    const handle = sseHandleOf(res.body);
    if (!handle) throw new Error("untilEnd takes a streamed answer made by sseStream");
    this.mine = false;
    const slot = this.slot;
    const rec = this.record;
    rec?.hold();
    let open = true;
    const release = () => {
      slot.release();
      if (open) {
        open = false;
        rec?.release();
      }
    };
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
