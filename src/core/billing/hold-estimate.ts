/**
 * The room a key's next hold will probably find, from the ledger's own answers (every hold
 * returns the credits and tokens left after it), minus every hold of the key still in flight.
 * It errs on the careful side within this process; another instance spending the same account
 * can make it optimistic, and then the hold refuses as usual. Used by the overlap and leasing
 * layers (docs/ledger.md).
 */
import type { HoldOutcome, HoldRequest } from "./ledger";

interface Room {
  /** Credits left after the last answered hold (micro-won); null when unknown. */
  freeMicro: bigint | null;
  /** Token room left after it; null without a token limit. */
  freeTokens: number | null;
  inflightMicro: bigint;
  inflightTokens: number;
}

/** Keys remembered at most; past it the map starts over (a cold key just waits for its hold). */
const MAX_KEYS = 100_000;

export class HoldEstimates {
  private rooms = new Map<string, Room>();

  private room(h: HoldRequest): Room {
    const id = `${h.userId}/${h.keyId ?? ""}`;
    let r = this.rooms.get(id);
    if (!r) {
      if (this.rooms.size >= MAX_KEYS) this.rooms.clear();
      r = { freeMicro: null, freeTokens: null, inflightMicro: 0n, inflightTokens: 0 };
      this.rooms.set(id, r);
    }
    return r;
  }

  /** True when the last answer left room for `h` beyond every hold of the key still in flight. */
  allows(h: HoldRequest): boolean {
    const room = this.roomFor(h);
    return room !== null && room.micro >= h.amountMicro && (room.tokens === null || room.tokens >= h.tokens);
  }

  /** The room the last answer left for the key beyond every hold in flight; null when unknown. */
  roomFor(h: HoldRequest): { micro: bigint; tokens: number | null } | null {
    const r = this.rooms.get(`${h.userId}/${h.keyId ?? ""}`);
    if (!r || r.freeMicro === null) return null;
    return {
      micro: r.freeMicro - r.inflightMicro,
      tokens: r.freeTokens === null ? null : r.freeTokens - r.inflightTokens,
    };
  }

  /** A hold left for the database. */
  sent(h: HoldRequest): void {
    const r = this.room(h);
    r.inflightMicro += h.amountMicro;
    r.inflightTokens += h.tokens;
  }

  /** Its answer (`free` null when the call failed or the answer carries no room). */
  answered(
    h: HoldRequest,
    outcome: HoldOutcome | null,
    free: { micro: bigint | null; tokens: number | null } | null,
  ): void {
    const r = this.room(h);
    r.inflightMicro -= h.amountMicro;
    r.inflightTokens -= h.tokens;
    if (outcome === "duplicate") return; // says nothing about the key's room
    r.freeMicro = free?.micro ?? null;
    r.freeTokens = free?.tokens ?? null;
  }
}
