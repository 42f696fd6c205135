/**
 * The ledger's statements over the gw_* SQL functions (docs/ledger-functions.sql): each is one
 * prepared statement, one round trip and one transaction whose commit mode it sets itself
 * (LEDGER_COMMIT). What the functions guarantee and how the layers use them: docs/ledger.md.
 */
import type { Database } from "../client";
import type { UsageEvent } from "../../core/billing/ledger";
import type {
  HoldAnswer,
  HoldItem,
  LeaseCharge,
  LeaseStore,
  LedgerStore,
  SettleAnswer,
  SettleItem,
} from "../../core/billing/ledger-store";
import { isDatabaseUnavailable } from "../../lib/db-errors";
import { holdAnswer, type HoldRow } from "./hold-answer";

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
 * The usage events of a batch as one JSON array, `[{…},null,…]`, for `EVENTS_SQL`. Sent as a
 * `jsonb[]`, postgres.js escaped every quote of every event into an array literal: two regular
 * expressions and a copy of each event on every charge, about 2 % of the process's CPU at saturation.
 */
function eventsJson(events: (UsageEvent | null)[]): string {
  let out = "[";
  for (let i = 0; i < events.length; i++) out += `${i ? "," : ""}${eventJson(events[i]!) ?? "null"}`;
  return `${out}]`;
}

/** `eventsJson`'s array back as the `jsonb[]` the ledger functions take, in order, JSON null as SQL NULL. */
const eventsSql = (param: string) =>
  `array(select nullif(e, 'null'::jsonb) from jsonb_array_elements(${param}::jsonb) with ordinality t(e, i) order by i)`;

/**
 * The commit mode of the statement's own (implicit) transaction: `durable` waits for the WAL
 * flush (a PostgreSQL crash loses nothing); `async` does not (a PostgreSQL crash may lose the
 * last ~600 ms of ledger calls, each whole). docs/ledger.md, "Commit mode".
 */
export type LedgerCommit = "durable" | "async";
const COMMIT_SQL: Record<LedgerCommit, string> = {
  durable: "set_config('synchronous_commit', 'on', true)",
  async: "set_config('synchronous_commit', 'off', true)",
};

const settleAnswer = (r: string): SettleAnswer => (r === "ok" || r === "capped" ? r : "not_open");

export class SqlLedgerStore implements LedgerStore {
  private readonly commit: string;
  /** Set-based steps pay over a connection pool; PGlite runs one statement at a time anyway. */
  readonly step?: LedgerStore["step"];

  constructor(
    private db: Database,
    commit: LedgerCommit = "durable",
  ) {
    this.commit = COMMIT_SQL[commit];
    if (db.kind === "postgres") this.step = (settles, holds) => this.stepMany(settles, holds);
  }

  async hold(h: HoldItem): Promise<HoldAnswer> {
    const rows = await this.db.query<HoldRow>(
      `select h.r, h.free_micro::text as f, h.free_tokens::text as ft from (select ${this.commit}) s, gw_hold($1, $2, $3, $4, $5, $6, $7) h`,
      [h.id, h.userId, h.keyId, h.month, h.amountMicro.toString(), h.tokens, h.ttlSeconds],
    );
    return holdAnswer(rows[0]!);
  }

  async settle(x: SettleItem): Promise<SettleAnswer> {
    const rows = await this.db.query<{ r: string }>(`select ${this.commit}, gw_settle($1, $2, $3, $4::jsonb) as r`, [
      x.id,
      x.costMicro.toString(),
      x.tokens,
      eventJson(x.event),
    ]);
    return settleAnswer(rows[0]!.r);
  }

  async release(id: string, event: UsageEvent | null): Promise<boolean> {
    const rows = await this.db.query<{ r: string }>(`select ${this.commit}, gw_release($1, $2::jsonb) as r`, [
      id,
      eventJson(event),
    ]);
    return rows[0]!.r === "ok";
  }

  async record(id: string, userId: string, keyId: string | null, event: UsageEvent): Promise<void> {
    await this.db.query(`select ${this.commit}, gw_insert_usage($1, $2, $3, 0, $4::jsonb)`, [
      id,
      userId,
      keyId,
      eventJson(event),
    ]);
  }

  async renew(ids: readonly string[], ttlSeconds: number): Promise<void> {
    await this.db.query(`select ${this.commit}, gw_renew_holds($1::uuid[], $2) as n`, [ids, ttlSeconds]);
  }

  expired(limit: number): Promise<{ id: string; lease: boolean }[]> {
    return this.db.query<{ id: string; lease: boolean }>(
      "select id, lease from holds where status = 'open' and expires_at < now() order by expires_at limit $1",
      [limit],
    );
  }

  unavailable(e: unknown): boolean {
    return isDatabaseUnavailable(e);
  }

  /** Settles, then holds, in one statement and transaction (gw_ledger_step). */
  private async stepMany(
    settles: SettleItem[],
    holds: HoldItem[],
  ): Promise<{ settles: SettleAnswer[]; holds: HoldAnswer[] }> {
    const rows = await this.db.query<HoldRow & { k: "s" | "h"; n: number }>(
      `select x.kind as k, x.n, x.r, x.free_micro::text as f, x.free_tokens::text as ft
         from (select ${this.commit}) s,
              gw_ledger_step($1::uuid[], $2::bigint[], $3::bigint[], ${eventsSql("$4")}, $5::uuid[], $6::uuid[], $7::uuid[], $8::text[], $9::bigint[], $10::bigint[], $11::int[]) x`,
      [
        settles.map((x) => x.id),
        settles.map((x) => x.costMicro.toString()),
        settles.map((x) => x.tokens),
        eventsJson(settles.map((x) => x.event)),
        holds.map((h) => h.id),
        holds.map((h) => h.userId),
        holds.map((h) => h.keyId),
        holds.map((h) => h.month),
        holds.map((h) => h.amountMicro.toString()),
        holds.map((h) => h.tokens),
        holds.map((h) => h.ttlSeconds),
      ],
    );
    if (rows.length !== settles.length + holds.length)
      throw new Error(`ledger step returned ${rows.length} results for ${settles.length + holds.length} calls`);
    const out = { settles: new Array<SettleAnswer>(settles.length), holds: new Array<HoldAnswer>(holds.length) };
    for (const row of rows) {
      const i = Number(row.n) - 1;
      if (row.k === "s") out.settles[i] = settleAnswer(row.r);
      else out.holds[i] = holdAnswer(row);
    }
    return out;
  }
}

export class SqlLeaseStore implements LeaseStore {
  private readonly commit: string;

  constructor(
    private db: Database,
    commit: LedgerCommit = "durable",
  ) {
    this.commit = COMMIT_SQL[commit];
  }

  async open(h: HoldItem): Promise<HoldAnswer> {
    const rows = await this.db.query<HoldRow>(
      `select o.r, o.free_micro::text as f, o.free_tokens::text as ft from (select ${this.commit}) s, gw_lease_open($1, $2, $3, $4, $5, $6, $7) o`,
      [h.id, h.userId, h.keyId, h.month, h.amountMicro.toString(), h.tokens, h.ttlSeconds],
    );
    return holdAnswer(rows[0]!);
  }

  async charge(items: LeaseCharge[]): Promise<SettleAnswer[]> {
    const rows = await this.db.query<{ n: number; r: string }>(
      `select x.n, x.r from (select ${this.commit}) s, gw_lease_charge($1::uuid[], $2::uuid[], $3::bigint[], $4::bigint[], $5::bigint[], ${eventsSql("$6")}) x`,
      [
        items.map((c) => c.lease),
        items.map((c) => c.id),
        items.map((c) => c.costMicro.toString()),
        items.map((c) => c.holdMicro.toString()),
        items.map((c) => c.tokens),
        eventsJson(items.map((c) => c.event)),
      ],
    );
    const out = new Array<SettleAnswer>(items.length).fill("not_open");
    for (const row of rows) out[Number(row.n) - 1] = settleAnswer(row.r);
    return out;
  }

  async leasedMicro(userId: string): Promise<bigint> {
    const rows = await this.db.query<{ m: string }>(
      "select coalesce(sum(amount_micro), 0)::text as m from holds where user_id = $1 and lease and status = 'open'",
      [userId],
    );
    return BigInt(rows[0]!.m);
  }

  async trim(id: string, keep: { micro: bigint; tokens: number }, opts: { close: boolean }): Promise<string> {
    const rows = await this.db.query<{ r: string }>(`select ${this.commit}, gw_lease_trim($1, $2, $3, $4) as r`, [
      id,
      keep.micro.toString(),
      keep.tokens,
      opts.close,
    ]);
    return rows[0]!.r;
  }
}
