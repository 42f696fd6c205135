/**
 * The credit-lease policy as a pure state machine: when a key is busy, how big a lease is, which
 * calls it covers, when it retires, and what the database must keep reserved meanwhile. It does
 * no I/O and reads no clock: every method takes the time and returns the statements to send as
 * effects; the leasing layer (leasing.ts) sends them and reports back. docs/ledger.md tells the
 * invariants and the life of a lease; test/billing/lease-policy.test.ts checks them against a
 * model of the database.
 */
import type { HoldOutcome, HoldRequest } from "./ledger";

export interface LeaseRules {
  /** Leasable holds of one key within `busyWindowMs` that make it busy. */
  busyCalls: number;
  busyWindowMs: number;
  /** A lease covers at most this many holds of the call that opened it… */
  leaseCalls: bigint;
  /** …and is not taken when a quarter of the key's room covers fewer than this many. */
  minCalls: bigint;
  /** Calls are held against a lease for at most this long after it opened. */
  maxAgeMs: number;
  /** A lease no call was held against for this long is retired. */
  idleMs: number;
}

export const LEASE_RULES: LeaseRules = {
  busyCalls: 16,
  busyWindowMs: 100,
  leaseCalls: 1024n,
  minCalls: 8n,
  maxAgeMs: 30_000,
  idleMs: 1_000,
};

export interface Lease {
  readonly id: string;
  readonly userId: string;
  readonly keyId: string | null;
  readonly month: string;
  /** What it held when it opened. */
  readonly sizeMicro: bigint;
  readonly sizeTokens: number;
  /** What the lease holds beyond its calls in flight and its charges on their way. */
  availMicro: bigint;
  availTokens: number;
  /** Calls held against it not yet charged or released (a charge on its way counts). */
  calls: number;
  /** What a trim must keep: the open calls' holds, and the costs of charges not yet landed. */
  keepMicro: bigint;
  keepTokens: number;
  readonly openedAt: number;
  usedAt: number;
  retired: boolean;
  /** Its close was asked for (at most once). */
  closing: boolean;
}

/** A statement the policy asks for. */
export type LeaseEffect =
  /** Place one hold for many calls (gw_lease_open); report the answer to `opened`. */
  | { kind: "open"; key: string; generation: number; request: HoldRequest; month: string }
  /** Give back what the lease holds beyond `keep` (its calls in flight may still spend that). */
  | { kind: "trim"; lease: Lease; keepMicro: bigint; keepTokens: number }
  /** Give back the rest and close the lease: no call of it is left. */
  | { kind: "close"; lease: Lease };

/** The room the ledger's last answers leave a key beyond its holds in flight (hold-estimate.ts). */
export type Room = { micro: bigint; tokens: number | null } | null;

interface KeyState {
  userId: string;
  keyId: string | null;
  /** Bumped when the key's leases are retired: a lease that was opening meanwhile may predate a limit change. */
  generation: number;
  leases: Lease[];
  opening: boolean;
  windowStart: number;
  windowCalls: number;
}

interface Held {
  lease: Lease;
  micro: bigint;
  tokens: number;
  /** Set once its charge was asked for: a retried settle must not move the accounting twice. */
  charge: { micro: bigint; tokens: number } | null;
}

/** What carving needs besides the hold: the clock, the month, the key's room and fresh ids. */
export interface CarveContext {
  now: number;
  month(): string;
  room(h: HoldRequest): Room;
  newId(): string;
}

export class LeasePolicy {
  private keys = new Map<string, KeyState>();
  private held = new Map<string, Held>();

  constructor(private rules: LeaseRules = LEASE_RULES) {}

  /** Whether call `id` is held against a lease. */
  has(id: string): boolean {
    return this.held.has(id);
  }

  /** The lease call `id` is held against; undefined when none. */
  leaseOf(id: string): string | undefined {
    return this.held.get(id)?.lease.id;
  }

  /**
   * Holds `h` against a lease of its key when one covers its whole hold (`held`), counting the
   * key's demand; asks for a lease when the key is busy. Only leasable holds are considered.
   */
  carve(h: HoldRequest, ctx: CarveContext): { held: boolean; effects: LeaseEffect[] } {
    const effects: LeaseEffect[] = [];
    if (!h.leasable || h.amountMicro <= 0n) return { held: false, effects };
    const key = keyOf(h);
    let st = this.keys.get(key);
    if (!st)
      this.keys.set(
        key,
        (st = {
          userId: h.userId,
          keyId: h.keyId,
          generation: 0,
          leases: [],
          opening: false,
          windowStart: 0,
          windowCalls: 0,
        }),
      );
    const now = ctx.now;
    if (now - st.windowStart > this.rules.busyWindowMs) {
      st.windowStart = now;
      st.windowCalls = 0;
    }
    st.windowCalls++;
    const month = st.leases.length ? ctx.month() : "";
    // retire() takes a lease out of st.leases, so the index only moves past leases kept.
    for (let i = 0; i < st.leases.length; ) {
      const lease = st.leases[i]!;
      if (lease.month !== month || now - lease.openedAt > this.rules.maxAgeMs) {
        this.retire(st, lease, effects);
        continue;
      }
      if (lease.availMicro < h.amountMicro || lease.availTokens < h.tokens) {
        // Spent (what is left would not cover a typical call): retired. A call much bigger than
        // the lease's own calls just goes to the database; the lease stays for the others.
        if (lease.availMicro < lease.sizeMicro / 8n || lease.availTokens < lease.sizeTokens / 8)
          this.retire(st, lease, effects);
        else i++;
        continue;
      }
      lease.availMicro -= h.amountMicro;
      lease.availTokens -= h.tokens;
      lease.keepMicro += h.amountMicro;
      lease.keepTokens += h.tokens;
      lease.calls++;
      lease.usedAt = now;
      this.held.set(h.id, { lease, micro: h.amountMicro, tokens: h.tokens, charge: null });
      // The next lease is asked for while this one still has half left, so calls need not wait for it.
      if (!st.opening && lease === st.leases[st.leases.length - 1] && lease.availMicro < lease.sizeMicro / 2n)
        this.open(key, st, h, ctx, effects);
      return { held: true, effects };
    }
    if (!st.opening && st.windowCalls >= this.rules.busyCalls) this.open(key, st, h, ctx, effects);
    return { held: false, effects };
  }

  /**
   * The answer to an `open` effect (null when the statement failed): the lease joins its key,
   * or is closed unused when the key's limits changed meanwhile.
   */
  opened(
    effect: Extract<LeaseEffect, { kind: "open" }>,
    outcome: HoldOutcome | null,
    now: number,
  ): { lease: Lease | null; effects: LeaseEffect[] } {
    const st = this.keys.get(effect.key);
    if (st) st.opening = false;
    if (outcome !== "ok") return { lease: null, effects: [] };
    const r = effect.request;
    const lease: Lease = {
      id: r.id,
      userId: r.userId,
      keyId: r.keyId,
      month: effect.month,
      sizeMicro: r.amountMicro,
      sizeTokens: r.tokens,
      availMicro: r.amountMicro,
      availTokens: r.tokens,
      calls: 0,
      keepMicro: 0n,
      keepTokens: 0,
      openedAt: now,
      usedAt: now,
      retired: false,
      closing: false,
    };
    if (!st || effect.generation !== st.generation) {
      // A limit may have changed while it was on its way: never used, closed at once.
      lease.retired = true;
      lease.closing = true;
      return { lease, effects: [{ kind: "close", lease }] };
    }
    st.leases.push(lease);
    return { lease, effects: [] };
  }

  /**
   * A leased call's charge is asked for: the lease's accounting moves once (a retry does not
   * move it again). Returns the lease and the call's own hold, at which the database caps it.
   */
  chargeAsked(id: string, costMicro: bigint, tokens: number): { lease: Lease; holdMicro: bigint } {
    const call = this.held.get(id)!;
    const lease = call.lease;
    if (!call.charge) {
      call.charge = { micro: costMicro > call.micro ? call.micro : costMicro, tokens };
      // The call's hold is no longer needed; its cost is, until the charge lands.
      lease.keepMicro += call.charge.micro - call.micro;
      lease.keepTokens += tokens - call.tokens;
      if (!lease.retired) {
        lease.availMicro += call.micro - call.charge.micro;
        lease.availTokens += call.tokens - tokens;
      }
    }
    return { lease, holdMicro: call.micro };
  }

  /** The charge's statement answered: the call is done; a retired lease without calls closes. */
  chargeLanded(id: string): readonly LeaseEffect[] {
    const call = this.held.get(id);
    if (!call?.charge) return NO_EFFECTS;
    this.held.delete(id);
    const lease = call.lease;
    lease.keepMicro -= call.charge.micro;
    lease.keepTokens -= call.charge.tokens;
    lease.calls--;
    return this.closeIfDone(lease);
  }

  /** Gives a failed call's hold back to its lease; nothing was charged. */
  release(id: string): { userId: string; keyId: string | null; effects: readonly LeaseEffect[] } {
    const call = this.held.get(id)!;
    const lease = call.lease;
    this.held.delete(id);
    lease.keepMicro -= call.micro;
    lease.keepTokens -= call.tokens;
    if (!lease.retired) {
      lease.availMicro += call.micro;
      lease.availTokens += call.tokens;
    }
    lease.calls--;
    return { userId: lease.userId, keyId: lease.keyId, effects: this.closeIfDone(lease) };
  }

  /** Retires the leases of an account, of one key, or all; a lease opening meanwhile is closed unused. */
  retireAll(match: { userId?: string; keyId?: string } = {}): { retired: Lease[]; effects: LeaseEffect[] } {
    const effects: LeaseEffect[] = [];
    const retired: Lease[] = [];
    for (const st of this.keys.values()) {
      if (match.userId !== undefined && st.userId !== match.userId) continue;
      if (match.keyId !== undefined && st.keyId !== match.keyId) continue;
      st.generation++;
      for (const lease of [...st.leases]) {
        retired.push(lease);
        this.retire(st, lease, effects);
      }
    }
    return { retired, effects };
  }

  /** The idle tick: leases unused for `idleMs` retire; keys with nothing left are forgotten. */
  idle(now: number): LeaseEffect[] {
    const effects: LeaseEffect[] = [];
    for (const [key, st] of this.keys) {
      for (const lease of [...st.leases]) if (now - lease.usedAt > this.rules.idleMs) this.retire(st, lease, effects);
      if (!st.leases.length && !st.opening && now - st.windowStart > this.rules.idleMs) this.keys.delete(key);
    }
    return effects;
  }

  /** Leases open, and the credit room (micro-KRW) still available in them. */
  totals(): { open: number; availableMicro: bigint } {
    let open = 0;
    let availableMicro = 0n;
    for (const st of this.keys.values()) {
      open += st.leases.length;
      for (const lease of st.leases) availableMicro += lease.availMicro;
    }
    return { open, availableMicro };
  }

  /** Whether an active lease holds room of the account. */
  holdsFor(userId: string): boolean {
    for (const st of this.keys.values()) if (st.leases.some((lease) => lease.userId === userId)) return true;
    return false;
  }

  private open(key: string, st: KeyState, h: HoldRequest, ctx: CarveContext, effects: LeaseEffect[]): void {
    const room = ctx.room(h);
    if (!room) return;
    const { leaseCalls, minCalls, maxAgeMs } = this.rules;
    let micro = room.micro / 4n;
    if (micro > h.amountMicro * leaseCalls) micro = h.amountMicro * leaseCalls;
    if (micro < h.amountMicro * minCalls) return;
    let tokens = h.tokens * Number(leaseCalls);
    if (room.tokens !== null) tokens = Math.min(tokens, Math.floor(room.tokens / 4));
    if (tokens < h.tokens * Number(minCalls)) return;
    st.opening = true;
    const request: HoldRequest = {
      id: ctx.newId(),
      userId: h.userId,
      keyId: h.keyId,
      amountMicro: micro,
      tokens,
      ttlSeconds: h.ttlSeconds + maxAgeMs / 1000,
    };
    effects.push({ kind: "open", key, generation: st.generation, request, month: ctx.month() });
  }

  private retire(st: KeyState, lease: Lease, effects: LeaseEffect[]): void {
    const i = st.leases.indexOf(lease);
    if (i >= 0) st.leases.splice(i, 1);
    if (lease.retired) return;
    lease.retired = true;
    lease.availMicro = 0n;
    lease.availTokens = 0;
    if (lease.calls === 0) {
      lease.closing = true;
      effects.push({ kind: "close", lease });
      return;
    }
    // Keep what the calls in flight may still spend and what is being charged; give back the rest.
    effects.push({ kind: "trim", lease, keepMicro: lease.keepMicro, keepTokens: lease.keepTokens });
  }

  private closeIfDone(lease: Lease): readonly LeaseEffect[] {
    // Shared when there is nothing to do: every charge that lands asks.
    if (!lease.retired || lease.calls !== 0 || lease.closing) return NO_EFFECTS;
    lease.closing = true;
    return [{ kind: "close", lease }];
  }
}

const NO_EFFECTS: readonly LeaseEffect[] = Object.freeze([]);

const keyOf = (h: HoldRequest) => `${h.userId}/${h.keyId ?? ""}`;
