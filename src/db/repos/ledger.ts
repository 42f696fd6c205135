/**
 * The Ledger port over the gw_* SQL functions (drizzle/0001_ledger_functions.sql). Every
 * charge is capped at its hold, so no balance goes below zero (drizzle/0013); a capped charge
 * is reported to `onCapped` (the gateway logs and counts it).
 *
 * Every hot-path call is one prepared statement and one round trip. By default it commits
 * durably; with LEDGER_COMMIT=async it commits asynchronously (`synchronous_commit = off` for
 * that transaction only, set in the same statement): the change is visible to every later
 * transaction at once, so balances, limits and the exactly-once close stay exact, but the
 * request does not wait for the WAL flush. A durable
 * commit costs one fsync (0.9 ms p50, 8 ms p99 on the benchmark machine) and, worse, holds
 * the user's row lock until the flush, which capped a single account at about 500 requests/s.
 * The price of async: if the PostgreSQL server itself crashes, the ledger calls of its last
 * ~3 × wal_writer_delay (600 ms by default) can be lost, each transaction as a whole (a lost
 * settle leaves its hold open for the sweeper; nothing is half-applied or applied twice).
 * Top-ups and every other money movement keep durable commits (they use other code paths).
 *
 * Under load, holds and settles are batched (PostgreSQL only): a call goes out at once while
 * fewer than LANE_SLOTS ledger statements are in flight, otherwise it joins the next batch,
 * so an idle gateway adds no wait and a busy one sends one statement for many calls: the
 * queued settles, then the queued holds, in one transaction (gw_ledger_step, drizzle/0009),
 * each kind as a few set-based statements (gw_settle_many, gw_hold_many, drizzle/0008). That
 * saves round trips, transactions and commits and, above all, stops the lock convoy on a busy
 * account's `users` row (every hold and settle locks it). A step locks every account it
 * touches up front in ascending id order, as every single-call function does, so two steps
 * cannot deadlock; what the set-based path does not cover runs call by call inside. A step
 * that fails as a whole (nothing of it is committed) is retried call by call, so one bad call
 * cannot fail its neighbours; unless it failed for want of the database (unreachable, or past
 * its query deadline): then every call of it fails at once, so a hold that waited for a slot
 * answers 503 after two query deadlines at most, not three.
 */
import type { Database } from "../client";
import { currentMonth, ROOM_REFUSALS, type HoldOutcome, type HoldRequest, type JobLedger, type Ledger, type UsageEvent } from "../../core/billing/ledger";
import { HoldEstimates } from "../../core/billing/hold-estimate";
import { isDatabaseUnavailable } from "../../lib/db-errors";
import { StepBatcher } from "./ledger-batch";
import { holdAnswer, type HoldAnswer, type HoldRow } from "./hold-answer";
import { Leases, trimLease } from "./leases";

/** A usage event as the ledger SQL functions read it (jsonb). */
export function eventJson(e: UsageEvent | null): string | null {
  if (!e) return null;
  return JSON.stringify({
    model: e.model,
    provider: e.provider,
    maker: e.maker,
    modality: e.modality,
    app: e.app,
    status: e.status,
    prompt_tokens: e.promptTokens,
    completion_tokens: e.completionTokens,
    cached_tokens: e.cachedTokens,
    cache_write_tokens: e.cacheWriteTokens,
    fx_milli: e.fxMilli === null ? null : e.fxMilli.toString(),
    latency_ms: e.latencyMs,
    cached: e.cached,
    api: e.api ?? (e.modality === "video" ? "video" : e.modality === "embedding" ? "embeddings" : "chat"),
    streamed: e.streamed ?? false,
    ttft_ms: e.ttftMs ?? null,
    error_code: e.errorCode ?? null,
    policy_decision: e.policyDecision ?? null,
  });
}

/**
 * The commit mode of the statement's own (implicit) transaction: `durable` waits for the WAL
 * flush (the default: a PostgreSQL crash loses nothing); `async` does not (LEDGER_COMMIT=async:
 * faster, but a PostgreSQL crash may lose the last ~600 ms of ledger calls, each whole).
 */
export type LedgerCommit = "durable" | "async";
const COMMIT_SQL: Record<LedgerCommit, string> = {
  durable: "set_config('synchronous_commit', 'on', true)",
  async: "set_config('synchronous_commit', 'off', true)",
};

const nextTurn = () => new Promise<void>((r) => setImmediate(r));

export class SqlLedger implements Ledger {
  private batches: StepBatcher<HoldItem, HoldAnswer, SettleItem, boolean> | null = null;
  private estimates = new HoldEstimates();
  /** Credit leases for busy keys (PostgreSQL only, with LEDGER_LEASES=on). */
  readonly leases: Leases | null = null;

  private readonly commit: string;

  constructor(
    private db: Database,
    private onOpenChange: (delta: number) => void = () => {},
    commit: LedgerCommit = "durable",
    leases = false,
    /** A settle or lease charge the database capped at its hold (drizzle/0013): `askedMicro` is what was asked. */
    private onCapped: (id: string, askedMicro: bigint) => void = () => {},
  ) {
    this.commit = COMMIT_SQL[commit];
    // PGlite runs one statement at a time anyway; batching pays only over a connection pool.
    if (db.kind === "postgres") {
      this.batches = new StepBatcher(LANE_SLOTS, MAX_BATCH, {
        step: (s, h) => this.step(s, h),
        hold: (h) => this.holdOne(h),
        settle: (x) => this.settleOne(x),
        failsAll: isDatabaseUnavailable,
      });
      if (leases) this.leases = new Leases(db, this.commit, this.estimates, onOpenChange, onCapped);
    }
  }

  /** Holds this process said yes to in `speculate`, already counted in flight. */
  private reserved = new Set<string>();

  /** When true, `h` counts as in flight from now on, so calls deciding meanwhile see it. */
  speculate(h: HoldRequest): boolean {
    if (this.leases?.carve(h)) return true;
    if (!this.estimates.allows(h)) return false;
    this.estimates.sent(h);
    this.reserved.add(h.id);
    return true;
  }

  hold(h: HoldRequest): Promise<HoldOutcome> {
    return this.place(h, true);
  }

  /**
   * This ledger for holds another component closes: a video job's hold is settled or released
   * by the job store's own statements (in any thread). Its holds meet the same room estimates
   * and leases — a hold refused for want of room while this instance leases the account's room
   * is tried again once that is given back, so a chat lease never refuses a job the balance
   * covers — but stay out of the open-holds gauge, which counts what this ledger closes.
   */
  forJobs(): JobLedger {
    return {
      hold: (h) => this.place({ ...h, leasable: false }, false),
      release: (id, event) => this.releaseHeld(id, event, false),
    };
  }

  private async place(h: HoldRequest, counted: boolean): Promise<HoldOutcome> {
    // A hold `speculate` counted in flight for the database goes there (the count must be answered).
    if (this.leases && (this.leases.has(h.id) || (!this.reserved.has(h.id) && this.leases.carve(h)))) return "ok";
    const r = await this.holdAlone(h, counted);
    // Room this instance has leased for the account is given back before a refusal for want of room stands.
    if (ROOM_REFUSALS.has(r) && this.leases?.holdsFor(h.userId)) {
      await this.leases.retireAll({ userId: h.userId });
      return this.holdAlone(h, counted);
    }
    return r;
  }

  private async holdAlone(h: HoldRequest, counted: boolean): Promise<HoldOutcome> {
    const item: HoldItem = { ...h, month: currentMonth() };
    if (!this.reserved.delete(h.id)) this.estimates.sent(h);
    let answer: HoldAnswer | null = null;
    try {
      // Sent on the next turn of the event loop: the caller's upstream request leaves first
      // (building and writing the statement is ~50 µs of this thread), and holds keep their
      // order because deferred callbacks run first in, first out.
      await nextTurn();
      answer = await (this.batches ? this.batches.hold(item) : this.holdOne(item));
    } finally {
      this.estimates.answered(h, answer?.r ?? null, answer);
    }
    const r = answer!.r;
    if (r === "ok" && counted) this.onOpenChange(1);
    return r;
  }

  async settle(id: string, costMicro: bigint, tokens: number, event: UsageEvent | null): Promise<boolean> {
    if (this.leases?.has(id)) return this.leases.charge(id, costMicro, tokens, eventJson(event));
    const item: SettleItem = { id, costMicro, tokens, event: eventJson(event) };
    const ok = await (this.batches ? this.batches.settle(item) : this.settleOne(item));
    if (ok) this.onOpenChange(-1);
    return ok;
  }

  release(id: string, event: UsageEvent | null): Promise<boolean> {
    return this.releaseHeld(id, event, true);
  }

  private async releaseHeld(id: string, event: UsageEvent | null, counted: boolean): Promise<boolean> {
    if (this.leases?.has(id)) {
      const { userId, keyId } = this.leases.release(id);
      if (event) await this.record(id, userId, keyId, event);
      return true;
    }
    const rows = await this.db.query<{ r: string }>(`select ${this.commit}, gw_release($1, $2::jsonb) as r`, [id, eventJson(event)]);
    const ok = rows[0]!.r === "ok";
    if (ok && counted) this.onOpenChange(-1);
    return ok;
  }

  async record(id: string, userId: string, keyId: string | null, event: UsageEvent): Promise<void> {
    await this.db.query(`select ${this.commit}, gw_insert_usage($1, $2, $3, 0, $4::jsonb)`, [id, userId, keyId, eventJson(event)]);
  }

  async renew(ids: readonly string[], ttlSeconds: number): Promise<void> {
    // A call held against a lease keeps its lease alive (the sweeper closes leases, not calls).
    const targets = [...new Set(ids.map((id) => this.leases?.leaseOf(id) ?? id))];
    if (!targets.length) return;
    await this.db.query(`select ${this.commit}, gw_renew_holds($1::uuid[], $2) as n`, [targets, ttlSeconds]);
  }

  async sweepExpired(limit = 500): Promise<number> {
    const rows = await this.db.query<{ id: string; lease: boolean }>("select id, lease from holds where status = 'open' and expires_at < now() order by expires_at limit $1", [limit]);
    let n = 0;
    for (const r of rows) {
      // A lease is closed, not released: what its calls spent stays its charged amount.
      if (r.lease) {
        if ((await trimLease(this.db, this.commit, r.id, 0n, 0, true)) === "ok") n++;
      } else if (await this.release(r.id, null)) n++;
    }
    return n;
  }

  private async holdOne(h: HoldItem): Promise<HoldAnswer> {
    const rows = await this.db.query<HoldRow>(`select h.r, h.free_micro::text as f, h.free_tokens::text as ft from (select ${this.commit}) s, gw_hold($1, $2, $3, $4, $5, $6, $7) h`, [
      h.id,
      h.userId,
      h.keyId,
      h.month,
      h.amountMicro.toString(),
      h.tokens,
      h.ttlSeconds,
    ]);
    return holdAnswer(rows[0]!);
  }

  /** Settles, then holds, in one statement and transaction (gw_ledger_step, drizzle/0009_ledger_step.sql). */
  private async step(settles: SettleItem[], holds: HoldItem[]): Promise<{ settles: boolean[]; holds: HoldAnswer[] }> {
    const rows = await this.db.query<HoldRow & { k: "s" | "h"; n: number }>(
      `select x.kind as k, x.n, x.r, x.free_micro::text as f, x.free_tokens::text as ft
         from (select ${this.commit}) s,
              gw_ledger_step($1::uuid[], $2::bigint[], $3::bigint[], $4::jsonb[], $5::uuid[], $6::uuid[], $7::uuid[], $8::text[], $9::bigint[], $10::bigint[], $11::int[]) x`,
      [
        settles.map((x) => x.id),
        settles.map((x) => x.costMicro.toString()),
        settles.map((x) => x.tokens),
        settles.map((x) => x.event),
        holds.map((h) => h.id),
        holds.map((h) => h.userId),
        holds.map((h) => h.keyId),
        holds.map((h) => h.month),
        holds.map((h) => h.amountMicro.toString()),
        holds.map((h) => h.tokens),
        holds.map((h) => h.ttlSeconds),
      ],
    );
    const out = { settles: new Array<boolean>(settles.length), holds: new Array<HoldAnswer>(holds.length) };
    for (const row of rows) {
      const i = Number(row.n) - 1;
      if (row.k === "s") out.settles[i] = this.settled(settles[i]!, row.r);
      else out.holds[i] = holdAnswer(row);
    }
    if (rows.length !== settles.length + holds.length) throw new Error(`ledger step returned ${rows.length} results for ${settles.length + holds.length} calls`);
    return out;
  }

  private async settleOne(x: SettleItem): Promise<boolean> {
    const rows = await this.db.query<{ r: string }>(`select ${this.commit}, gw_settle($1, $2, $3, $4::jsonb) as r`, [x.id, x.costMicro.toString(), x.tokens, x.event]);
    return this.settled(x, rows[0]!.r);
  }

  /** A settle's answer: 'ok', 'capped' (charged its hold's amount, not more) or 'not_open'. */
  private settled(x: SettleItem, r: string): boolean {
    if (r === "capped") this.onCapped(x.id, x.costMicro);
    return r === "ok" || r === "capped";
  }
}

interface HoldItem extends HoldRequest {
  month: string;
}

interface SettleItem {
  id: string;
  costMicro: bigint;
  tokens: number;
  event: string | null;
}

/**
 * Ledger statements in flight at once. Every one of them locks its accounts' `users` rows, so
 * more slots only queue inside PostgreSQL (lock waits); two overlap one statement's round trip
 * with the other's execution. Measured on the benchmark (one busy account, wrk -c50):
 * unbatched 650–850 req/s, two shared slots 900–1550 (per-call functions, before 0008/0009).
 */
const LANE_SLOTS = 2;
/** Calls in one batch at most (one statement, one transaction). */
const MAX_BATCH = 64;
