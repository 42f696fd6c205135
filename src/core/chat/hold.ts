/**
 * The chat call's credit hold: placed before the upstream call, or alongside it when the
 * ledger's last answers for the key leave room for it (hold-estimate.ts). Nothing of the
 * answer reaches the client before the hold is placed; a hold refused on its way aborts the
 * upstream call and reaches the client as the refusal itself.
 */
import { GatewayError } from "../errors";
import { holdOrThrow, ROOM_REFUSALS, type HoldRequest, type Ledger } from "../billing/ledger";
import type { Settlements } from "../billing/settlements";
import { holdAmountMicro } from "../billing/pricing";
import type { Candidate } from "../routing/candidates";

/** A hold that travelled alongside the upstream call and was refused: `error` goes to the client as is. */
export class HoldRefused {
  constructor(readonly error: unknown) {}
}

/**
 * Places the hold. A hold refused for want of room while this account's previous calls are
 * still settling is tried once more after they land: until a settle lands, its call's whole
 * hold still counts, so a client calling one request after another near a limit would
 * otherwise be refused a call that fits (the refused hold wrote nothing, so the retry is clean).
 */
export async function placeHold(ledger: Ledger, settlements: Settlements, h: HoldRequest): Promise<void> {
  try {
    await holdOrThrow(ledger, h);
  } catch (e) {
    if (!(e instanceof GatewayError) || !ROOM_REFUSALS.has(e.errorCode) || !settlements.pendingFor(h.userId)) throw e;
    await settlements.quiesce(h.userId);
    await holdOrThrow(ledger, h);
  }
}

/**
 * Starts the hold. With `overlap` (and the ledger's yes) it is sent at once but not awaited:
 * `pending` resolves to null once it is placed, or to the error that refused it. Otherwise the
 * hold is awaited here (its refusal is thrown) and `pending` is null. Holds are sent at once
 * either way, so they reach the ledger in the order the estimate counted them. (The promise is
 * wrapped: an async function's result would otherwise wait for it.)
 */
export async function startHold(
  ledger: Ledger,
  settlements: Settlements,
  h: HoldRequest,
  opts: { overlap: boolean },
): Promise<{ pending: Promise<unknown> | null }> {
  if (opts.overlap && ledger.speculate?.(h) === true)
    return {
      pending: placeHold(ledger, settlements, h).then(
        () => null,
        (e: unknown) => e ?? new Error("hold failed"),
      ),
    };
  await placeHold(ledger, settlements, h);
  return { pending: null };
}

/**
 * Waits for a hold that travelled alongside the upstream call `call`. A refused hold aborts
 * the call (through `spec`, which is part of its signal) and is thrown as HoldRefused, so the
 * caller does not release a hold that was never placed; otherwise the call's own result.
 */
export async function afterHold<T>(
  pending: Promise<unknown> | null,
  spec: AbortController | null,
  call: Promise<T>,
): Promise<T> {
  if (!pending || !spec) return call;
  const result = call.then(
    (v) => ({ ok: true as const, v }),
    (e: unknown) => ({ ok: false as const, e }),
  );
  const refused = await pending;
  if (refused !== null) {
    spec.abort();
    throw new HoldRefused(refused);
  }
  const r = await result;
  if (!r.ok) throw r.e;
  return r.v;
}

/** `spec`'s signal, made to follow `base` as well (cheaper than AbortSignal.any on every overlapped call). */
export function following(spec: AbortController | null, base: AbortSignal | undefined): AbortSignal | undefined {
  if (!spec || !base) return spec?.signal ?? base;
  if (base.aborted) spec.abort(base.reason);
  else base.addEventListener("abort", () => spec.abort(base.reason), { once: true });
  return spec.signal;
}

/**
 * The hold of a call that may run on any of `candidates`: the dearest of them, each for its own
 * input estimate (image parts count differently per provider, estimate.ts).
 */
export function worstHoldMicro(
  candidates: readonly Candidate[],
  inputFor: (c: Candidate) => number,
  maxTokens: number,
  fxMilli: bigint,
): bigint {
  let max = 0n;
  for (const c of candidates) {
    const h = holdAmountMicro([c.offering.pricing!], inputFor(c), maxTokens, fxMilli);
    if (h > max) max = h;
  }
  return max;
}
