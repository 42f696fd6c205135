/**
 * Credit leases: a busy key's calls are held in memory, against one database hold.
 *
 * Every hold and settle of an account locks its `users` row, so one account's ledger steps run
 * one after another, and a call cannot answer before its hold's round trip (bench/README.md).
 * When a key is busy (BUSY_CALLS leasable holds within BUSY_WINDOW_MS) and the ledger's last
 * answer leaves plenty of room, the instance places one hold for many calls — a lease, checked
 * by gw_hold like any hold: balance, the key's budget and token limit, org budgets — and holds
 * the key's next calls against it in memory, with no round trip. Their settles are charged
 * against the lease in batches behind the answers (gw_lease_charge), each call exactly once.
 *
 * What keeps the money exact:
 * - a call is held against a lease only when the lease's uncommitted part covers the call's
 *   whole hold, so the database never has less reserved than the calls in flight may spend;
 * - a lease takes at most a quarter of the room the key had left (and at most LEASE_CALLS
 *   holds of the call that opened it), and none is taken when that is under MIN_CALLS holds:
 *   near a limit every call goes to the database alone, exactly as without leases;
 * - a lease is used for at most MAX_AGE_MS and its expiry is that plus the call TTL, renewed
 *   while a call held against it runs (SqlLedger.renew), so the sweeper never closes a lease a
 *   live call may still be charged against;
 * - a call's charge is capped at its own hold; what a lease no longer covers (or any charge to a
 *   lease already closed) comes only from the account's free credits, never below zero
 *   (gw_lease_charge, drizzle/0013);
 * - a lease idle for IDLE_MS, one that is spent (less than an eighth left), and every lease
 *   of a key or account whose limits changed (cache invalidation) or whose dashboard is read,
 *   is retired: what its calls in flight cannot spend is given back at once (gw_lease_trim) and
 *   it is closed when its last call is charged.
 */
import type { Database } from "../client";
import type { HoldEstimates } from "../../core/billing/hold-estimate";
import { currentMonth, type HoldRequest } from "../../core/billing/ledger";
import { holdAnswer, type HoldAnswer, type HoldRow } from "./hold-answer";
import { isDatabaseUnavailable } from "../../lib/db-errors";
import { StepBatcher } from "./ledger-batch";
import { swallowed } from "../../lib/log";

/** Leasable holds of one key within BUSY_WINDOW_MS that make it busy. */
const BUSY_CALLS = 16;
const BUSY_WINDOW_MS = 100;
/** A lease covers at most this many holds of the call that opened it… */
const LEASE_CALLS = 1024n;
/** …and is not taken when a quarter of the key's room covers fewer than this many. */
const MIN_CALLS = 8n;
/** Calls are held against a lease for at most this long after it opened. */
const MAX_AGE_MS = 30_000;
/** A lease no call was held against for this long is retired. */
const IDLE_MS = 1_000;
/** Charges in one statement at most. */
const MAX_CHARGES = 512;

interface Lease {
  id: string;
  userId: string;
  keyId: string | null;
  month: string;
  /** What it held when it opened. */
  sizeMicro: bigint;
  sizeTokens: number;
  /** What the lease holds beyond its calls in flight and its charges on their way. */
  availMicro: bigint;
  availTokens: number;
  /** Calls held against it not yet charged or released, and charges not yet landed. */
  calls: number;
  /** What a trim must keep: the open calls' holds, and the costs of charges not yet landed. */
  keepMicro: bigint;
  keepTokens: number;
  openedAt: number;
  usedAt: number;
  retired: boolean;
  closing: Promise<void> | null;
}

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
  /** Set once its charge was sent (a retry of the settle must not move the accounting twice). */
  charge: { micro: bigint; tokens: number } | null;
}

interface ChargeItem {
  lease: string;
  id: string;
  costMicro: bigint;
  /** The call's own hold: its charge is capped at it (gw_lease_charge, drizzle/0013). */
  holdMicro: bigint;
  tokens: number;
  event: string | null;
}

export class Leases {
  private keys = new Map<string, KeyState>();
  private held = new Map<string, Held>();
  private charges: StepBatcher<never, never, ChargeItem, boolean>;
  private timer: ReturnType<typeof setInterval>;

  constructor(
    private db: Database,
    private commitSql: string,
    private estimates: HoldEstimates,
    private onOpenChange: (delta: number) => void,
    private onCapped: (id: string, askedMicro: bigint) => void = () => {},
  ) {
    // One statement at a time: charges of one account lock its row anyway, so a second slot
    // would only wait on the lock; meanwhile the next batch grows.
    this.charges = new StepBatcher(1, MAX_CHARGES, {
      step: async (items) => ({ settles: await this.chargeMany(items), holds: [] }),
      settle: async (item) => (await this.chargeMany([item]))[0]!,
      hold: () => Promise.reject(new Error("not used")),
      failsAll: isDatabaseUnavailable,
    });
    this.timer = setInterval(() => this.retireIdle(), IDLE_MS / 2);
    this.timer.unref?.();
  }

  /** Whether `id` is a call held against a lease (its settle and release go through here). */
  has(id: string): boolean {
    return this.held.has(id);
  }

  /** The lease call `id` is held against; undefined when it is not. */
  leaseOf(id: string): string | undefined {
    return this.held.get(id)?.lease.id;
  }

  /**
   * Holds `h` against a lease of its key when one covers it (true), counting the key's demand
   * and opening a lease when the key is busy. Only holds marked leasable are considered.
   */
  carve(h: HoldRequest): boolean {
    if (!h.leasable || h.amountMicro <= 0n) return false;
    const key = `${h.userId}/${h.keyId ?? ""}`;
    let st = this.keys.get(key);
    if (!st) this.keys.set(key, (st = { userId: h.userId, keyId: h.keyId, generation: 0, leases: [], opening: false, windowStart: 0, windowCalls: 0 }));
    const now = performance.now();
    if (now - st.windowStart > BUSY_WINDOW_MS) {
      st.windowStart = now;
      st.windowCalls = 0;
    }
    st.windowCalls++;
    const month = st.leases.length ? currentMonth() : "";
    // retire() takes a lease out of st.leases, so the index only moves past leases kept.
    for (let i = 0; i < st.leases.length; ) {
      const l = st.leases[i]!;
      if (l.month !== month || now - l.openedAt > MAX_AGE_MS) {
        void this.retire(st, l);
        continue;
      }
      if (l.availMicro < h.amountMicro || l.availTokens < h.tokens) {
        // Spent (what is left would not cover a typical call): retired. A call much bigger than
        // the lease's own calls just goes to the database; the lease stays for the others.
        if (l.availMicro < l.sizeMicro / 8n || l.availTokens < l.sizeTokens / 8) void this.retire(st, l);
        else i++;
        continue;
      }
      l.availMicro -= h.amountMicro;
      l.availTokens -= h.tokens;
      l.keepMicro += h.amountMicro;
      l.keepTokens += h.tokens;
      l.calls++;
      l.usedAt = now;
      this.held.set(h.id, { lease: l, micro: h.amountMicro, tokens: h.tokens, charge: null });
      // The next lease is asked for while this one still has half left, so calls need not wait for it.
      if (!st.opening && l === st.leases[st.leases.length - 1] && l.availMicro < l.sizeMicro / 2n) this.open(st, h);
      return true;
    }
    if (!st.opening && st.windowCalls >= BUSY_CALLS) this.open(st, h);
    return false;
  }

  /** Charges a call held against a lease, exactly once; false when it was charged before. */
  async charge(id: string, costMicro: bigint, tokens: number, event: string | null): Promise<boolean> {
    const c = this.held.get(id)!;
    const l = c.lease;
    if (!c.charge) {
      // The database charges at most the call's hold; the lease's accounting follows it.
      c.charge = { micro: costMicro > c.micro ? c.micro : costMicro, tokens };
      // The call's hold is no longer needed; its cost is, until the charge lands.
      l.keepMicro += c.charge.micro - c.micro;
      l.keepTokens += tokens - c.tokens;
      if (!l.retired) {
        l.availMicro += c.micro - c.charge.micro;
        l.availTokens += c.tokens - tokens;
      }
    }
    // A failed statement throws here and the caller retries; the accounting above stays.
    const ok = await this.charges.settle({ lease: l.id, id, costMicro, holdMicro: c.micro, tokens, event });
    this.held.delete(id);
    l.keepMicro -= c.charge.micro;
    l.keepTokens -= c.charge.tokens;
    l.calls--;
    this.closeIfDone(l);
    return ok;
  }

  /** Gives a call's hold back to its lease (the call failed); nothing was charged. */
  release(id: string): { userId: string; keyId: string | null } {
    const c = this.held.get(id)!;
    const l = c.lease;
    this.held.delete(id);
    l.keepMicro -= c.micro;
    l.keepTokens -= c.tokens;
    if (!l.retired) {
      l.availMicro += c.micro;
      l.availTokens += c.tokens;
    }
    l.calls--;
    this.closeIfDone(l);
    return { userId: l.userId, keyId: l.keyId };
  }

  /**
   * Retires the leases of an account (or of one key, or all), gives back what their calls in
   * flight cannot spend and resolves once that is written (and, for a lease without calls in
   * flight, once it is closed).
   */
  async retireAll(match: { userId?: string; keyId?: string } = {}): Promise<void> {
    const waits: Promise<void>[] = [];
    for (const st of this.keys.values()) {
      if (match.userId !== undefined && st.userId !== match.userId) continue;
      if (match.keyId !== undefined && st.keyId !== match.keyId) continue;
      st.generation++;
      for (const l of [...st.leases]) waits.push(this.retire(st, l));
    }
    await Promise.all(waits);
  }

  /** Leases this instance holds open, and the credit room (micro-KRW) still available in them. */
  totals(): { open: number; availableMicro: bigint } {
    let open = 0;
    let availableMicro = 0n;
    for (const st of this.keys.values()) {
      open += st.leases.length;
      for (const l of st.leases) availableMicro += l.availMicro;
    }
    return { open, availableMicro };
  }

  /** Whether this instance holds an active lease for the account. */
  holdsFor(userId: string): boolean {
    for (const st of this.keys.values()) if (st.leases.some((l) => l.userId === userId)) return true;
    return false;
  }

  /** Stops the idle timer; retires every lease (closing those without calls in flight). */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.retireAll();
  }

  private open(st: KeyState, h: HoldRequest): void {
    const room = this.estimates.roomFor(h);
    if (!room) return;
    let micro = room.micro / 4n;
    if (micro > h.amountMicro * LEASE_CALLS) micro = h.amountMicro * LEASE_CALLS;
    if (micro < h.amountMicro * MIN_CALLS) return;
    let tokens = h.tokens * Number(LEASE_CALLS);
    if (room.tokens !== null) tokens = Math.min(tokens, Math.floor(room.tokens / 4));
    if (tokens < h.tokens * Number(MIN_CALLS)) return;
    const lease: HoldRequest = { id: crypto.randomUUID(), userId: h.userId, keyId: h.keyId, amountMicro: micro, tokens, ttlSeconds: h.ttlSeconds + MAX_AGE_MS / 1000 };
    const month = currentMonth();
    const generation = st.generation;
    st.opening = true;
    this.estimates.sent(lease);
    let answer: HoldAnswer | undefined;
    this.db
      .query<HoldRow>(
        `select o.r, o.free_micro::text as f, o.free_tokens::text as ft from (select ${this.commitSql}) s, gw_lease_open($1, $2, $3, $4, $5, $6, $7) o`,
        [lease.id, lease.userId, lease.keyId, month, micro.toString(), tokens, lease.ttlSeconds],
      )
      .then((rows) => {
        answer = holdAnswer(rows[0]!);
        if (answer.r !== "ok") return;
        const now = performance.now();
        const l: Lease = {
          id: lease.id, userId: h.userId, keyId: h.keyId, month, sizeMicro: micro, sizeTokens: tokens, availMicro: micro, availTokens: tokens, calls: 0,
          keepMicro: 0n, keepTokens: 0, openedAt: now, usedAt: now, retired: false, closing: null,
        };
        this.onOpenChange(1);
        if (generation !== st.generation) {
          // A limit may have changed while it was on its way: never used, closed at once.
          l.retired = true;
          void this.close(l);
          return;
        }
        st.leases.push(l);
      })
      // No lease: the calls go to the database one by one.
      .catch(swallowed("credit lease open", { key_id: h.keyId }))
      .finally(() => {
        st.opening = false;
        this.estimates.answered(lease, answer?.r ?? null, answer ?? null);
      });
  }

  private retire(st: KeyState, l: Lease): Promise<void> {
    const i = st.leases.indexOf(l);
    if (i >= 0) st.leases.splice(i, 1);
    if (l.retired) return l.closing ?? Promise.resolve();
    l.retired = true;
    l.availMicro = 0n;
    l.availTokens = 0;
    if (l.calls === 0) return this.close(l);
    // Keep what the calls in flight may still spend and what is being charged; give back the rest.
    return this.trim(l, l.keepMicro, l.keepTokens, false).catch(swallowed("credit lease trim", { lease_id: l.id }));
  }

  private retireIdle(): void {
    const now = performance.now();
    for (const [key, st] of this.keys) {
      for (const l of [...st.leases]) if (now - l.usedAt > IDLE_MS) void this.retire(st, l);
      if (!st.leases.length && !st.opening && now - st.windowStart > IDLE_MS) this.keys.delete(key);
    }
  }

  private closeIfDone(l: Lease): void {
    if (l.retired && l.calls === 0 && !l.closing) void this.close(l);
  }

  private close(l: Lease): Promise<void> {
    // A failed close leaves the lease to the sweeper at its expiry (gw_lease_trim closes it then).
    l.closing ??= this.trim(l, 0n, 0, true).then(
      () => this.onOpenChange(-1),
      () => {},
    );
    return l.closing;
  }

  private async trim(l: Lease, keepMicro: bigint, keepTokens: number, close: boolean): Promise<void> {
    await trimLease(this.db, this.commitSql, l.id, keepMicro, keepTokens, close);
  }

  private async chargeMany(items: ChargeItem[]): Promise<boolean[]> {
    const rows = await this.db.query<{ n: number; r: string }>(
      `select x.n, x.r from (select ${this.commitSql}) s, gw_lease_charge($1::uuid[], $2::uuid[], $3::bigint[], $4::bigint[], $5::bigint[], $6::jsonb[]) x`,
      [
        items.map((c) => c.lease),
        items.map((c) => c.id),
        items.map((c) => c.costMicro.toString()),
        items.map((c) => c.holdMicro.toString()),
        items.map((c) => c.tokens),
        items.map((c) => c.event),
      ],
    );
    const out = new Array<boolean>(items.length).fill(false);
    for (const row of rows) {
      const item = items[Number(row.n) - 1]!;
      if (row.r === "capped") this.onCapped(item.id, item.costMicro);
      out[Number(row.n) - 1] = row.r === "ok" || row.r === "capped";
    }
    return out;
  }
}

/**
 * Gives back what lease `id` holds beyond `keepMicro` / `keepTokens`, or all of it and closes it
 * (`close`); 'not_open' when it was closed already. Also how the sweeper closes an expired lease.
 */
export async function trimLease(db: Database, commitSql: string, id: string, keepMicro: bigint, keepTokens: number, close: boolean): Promise<string> {
  const rows = await db.query<{ r: string }>(`select ${commitSql}, gw_lease_trim($1, $2, $3, $4) as r`, [id, keepMicro.toString(), keepTokens, close]);
  return rows[0]!.r;
}
