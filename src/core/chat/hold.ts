/**
 * The chat call's credit hold: placed before the upstream call, or alongside it when the
 * ledger's last answers for the key leave room for it (hold-estimate.ts). Nothing of the
 * answer reaches the client before the hold is placed; a hold refused on its way aborts the
 * upstream call and reaches the client as the refusal itself (raceHold).
 */
import { GatewayError } from "../errors";
import { holdOrThrow, ROOM_REFUSALS, type HoldRequest, type Ledger } from "../billing/ledger";
import type { Settlements } from "../billing/settlements";
import { holdAmountMicro } from "../billing/pricing";
import type { Candidate } from "../routing/candidates";

/** A hold sent alongside the upstream call: settles to whether the ledger placed it (never rejects). */
export type PendingHold = Promise<{ kind: "placed" } | { kind: "refused"; error: unknown }>;

/**
 * How a call raced with its hold ended: `held`, the hold is placed (or was placed before the
 * call) and `value` is the call's answer; `refused`, the hold was refused on its way, the call
 * was aborted, and `error` goes to the client as is (nothing was held, so nothing is released).
 */
export type HoldRace<T> = { kind: "held"; value: T } | { kind: "refused"; error: unknown };

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
 * `pending` settles once it is placed or refused. Otherwise the hold is awaited here (its
 * refusal is thrown) and `pending` is null. Holds are sent at once either way, so they reach
 * the ledger in the order the estimate counted them. (The promise is wrapped: an async
 * function's result would otherwise wait for it.)
 */
export function startHold(
  ledger: Ledger,
  settlements: Settlements,
  h: HoldRequest,
  opts: { overlap: boolean },
): Promise<{ pending: PendingHold | null }> {
  const start = ledger.begin?.(h, opts.overlap) ?? "await";
  // Placed in memory against a credit lease (a busy key's usual case): nothing to wait for,
  // and no async call made to say so.
  if (start === "placed") return PLACED;
  return sendHold(ledger, settlements, h, start === "alongside");
}

const PLACED = Promise.resolve({ pending: null });

async function sendHold(
  ledger: Ledger,
  settlements: Settlements,
  h: HoldRequest,
  alongside: boolean,
): Promise<{ pending: PendingHold | null }> {
  if (alongside)
    return {
      pending: placeHold(ledger, settlements, h).then(
        () => ({ kind: "placed" as const }),
        (e: unknown) => ({ kind: "refused" as const, error: e ?? new Error("hold failed") }),
      ),
    };
  await placeHold(ledger, settlements, h);
  return { pending: null };
}

/**
 * Runs `call` while the hold `pending` is on its way (none: the hold was placed first). The
 * call gets `signal`, which a refused hold aborts as well; the call's own failure is thrown
 * once the hold is placed, so a failed call always has a hold to release.
 */
export async function raceHold<T>(
  pending: PendingHold | null,
  signal: AbortSignal | undefined,
  call: (signal: AbortSignal | undefined) => Promise<T>,
): Promise<HoldRace<T>> {
  if (!pending) return { kind: "held", value: await call(signal) };
  const refusal = new AbortController();
  // Following `signal` with one listener is cheaper than AbortSignal.any on every overlapped call.
  if (signal?.aborted) refusal.abort(signal.reason);
  else signal?.addEventListener("abort", () => refusal.abort(signal.reason), { once: true });
  const result = call(refusal.signal).then(
    (value) => ({ ok: true as const, value }),
    (error: unknown) => ({ ok: false as const, error }),
  );
  const hold = await pending;
  if (hold.kind === "refused") {
    refusal.abort();
    return hold;
  }
  const r = await result;
  if (!r.ok) throw r.error;
  return { kind: "held", value: r.value };
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
