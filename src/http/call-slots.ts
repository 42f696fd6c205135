/**
 * The HTTP side of call admission (core/calls/admission.ts). A model route takes its slot
 * right after authentication with `using`, so every way out of the handler (an answer, a
 * thrown error) gives it back; a streamed answer hands the slot to its body, which gives it
 * back when the stream ends, fails or is cancelled, or when the client goes away.
 */
import type { KeyPrincipal } from "../core/auth/principal";
import type { CallAdmission, CallSlot } from "../core/calls/admission";
import { requestRecord, type RequestRecord } from "./request-log";

export class CallSlots {
  constructor(readonly admission: CallAdmission) {}

  /** A slot for this key's call, or the 429 / 503 GatewayError. */
  async take(p: KeyPrincipal, request: Request): Promise<HeldSlot> {
    return new HeldSlot(
      await this.admission.admit({ userId: p.user.id, keyId: p.keyId }, request.signal),
      request.signal,
      requestRecord(request),
    );
  }
}

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
    this.mine = false;
    const slot = this.slot;
    const rec = this.record;
    rec?.hold();
    let first = true;
    let open = true;
    const release = () => {
      slot.release();
      if (open) {
        open = false;
        rec?.release();
      }
    };
    // A client that leaves mid-stream frees the slot at once, whatever the stream still does.
    this.signal.addEventListener("abort", release, { once: true });
    const reader = res.body.getReader();
    const body = new ReadableStream<Uint8Array>({
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

  [Symbol.dispose](): void {
    if (this.mine) this.slot.release();
  }
}
