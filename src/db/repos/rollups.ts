/**
 * The statistics rollups: the rollup job's batch (usage events → hourly and daily buckets)
 * and the readers behind the public statistics and the usage report.
 *
 * A batch runs in one transaction that holds the row lock of `stats_rollup_state`, so two
 * runners (several instances, or the job and a test) never fold an event twice: the second
 * one waits, or skips its turn. All reading of events and all upserts happen in a single
 * statement, hence on a single snapshot: the ids it saw missing are exactly those it did not
 * fold (see core/stats/rollup-state.ts for how such holes are picked up later).
 */
import { sql, type SQL } from "drizzle-orm";
import type { Database } from "../client";
import {
  decodeHoles,
  encodeHoles,
  MAX_HOLES,
  nextRollupState,
  splitWindow,
  type BatchResult,
  type DailyUsageRow,
  type Granularity,
  type ModelTokenRow,
  type RollupStore,
  type SeriesRow,
  type StatsDimension,
  type StatsReader,
  type Window,
} from "../../core/stats";

export interface RollupRepoOptions {
  /** Distinct accounts kept per bucket and name: the privacy threshold (see schema/rollups.ts). */
  accountCap: number;
  /**
   * An account counts towards naming a model or app only for calls made at least this many
   * hours after it was created (docs/stats.md, "Who counts"); 0 counts every account.
   */
  minAccountAgeHours?: number;
  now?: () => number;
}

/** Deletes the rollup rows no window reads any more (run at most once an hour). */
function pruneStatements(now: string): SQL[] {
  return [
    // Hourly rows serve the edges of windows up to 30 days and the 30 days before (trend).
    sql`delete from stats_model_hourly where bucket < ${now}::timestamptz - interval '62 days'`,
    sql`delete from stats_app_hourly where bucket < ${now}::timestamptz - interval '62 days'`,
    // Distinct accounts are read for the current window only: 30 days by the hour, 24 weeks by the day.
    sql`delete from stats_hourly_accounts where bucket < ${now}::timestamptz - interval '32 days'`,
    sql`delete from stats_daily_accounts where bucket < ${now}::timestamptz - interval '200 days'`,
  ];
}

function rowsOf(r: unknown): Record<string, unknown>[] {
  return (Array.isArray(r) ? r : ((r as { rows?: unknown[] }).rows ?? [])) as Record<string, unknown>[];
}

const num = (v: unknown): number => (v === null || v === undefined ? 0 : Number(v));

/** Upsert of model (or app) counters per `grain` bucket from the `ev` CTE. */
function modelUpsert(table: string, grain: "hour" | "day"): string {
  return `insert into ${table} as t (bucket, model, provider, maker, modality, success, calls, cache_hits, prompt_tokens, completion_tokens, cost_micro)
    select ${grain}_b, model, coalesce(provider, ''), coalesce(maker, ''), modality, status < 400,
      count(*), count(*) filter (where cached),
      coalesce(sum(prompt_tokens) filter (where not cached), 0), coalesce(sum(completion_tokens) filter (where not cached), 0),
      coalesce(sum(cost_micro), 0)::bigint
    from ev group by 1, 2, 3, 4, 5, 6
    on conflict (bucket, model, provider, maker, modality, success) do update set
      calls = t.calls + excluded.calls, cache_hits = t.cache_hits + excluded.cache_hits,
      prompt_tokens = t.prompt_tokens + excluded.prompt_tokens, completion_tokens = t.completion_tokens + excluded.completion_tokens,
      cost_micro = t.cost_micro + excluded.cost_micro`;
}

function appUpsert(table: string, grain: "hour" | "day"): string {
  return `insert into ${table} as t (bucket, app, modality, success, calls, cache_hits, prompt_tokens, completion_tokens)
    select ${grain}_b, app, modality, status < 400,
      count(*), count(*) filter (where cached),
      coalesce(sum(prompt_tokens) filter (where not cached), 0), coalesce(sum(completion_tokens) filter (where not cached), 0)
    from ev where app is not null group by 1, 2, 3, 4
    on conflict (bucket, app, modality, success) do update set
      calls = t.calls + excluded.calls, cache_hits = t.cache_hits + excluded.cache_hits,
      prompt_tokens = t.prompt_tokens + excluded.prompt_tokens, completion_tokens = t.completion_tokens + excluded.completion_tokens`;
}

/**
 * New distinct accounts per bucket and name, keeping at most `cap` per (bucket, dim, name).
 * The stored count is read once per group; full groups (the usual case) cost one lookup each.
 * Every call has an account (keys are free to mint, so they are not what is counted). Only a
 * call that was answered, not from the cache, and charged makes its account count, and, with
 * `ageHours`, only when the account was that old at the call: sybils made for an attack must
 * pay and wait (docs/stats.md, "Who counts").
 */
function accountsInsert(table: string, grain: "hour" | "day", cap: number, ageHours: number): string {
  const aged =
    ageHours > 0
      ? `join users u on u.id = ev.user_id and ev.created_at >= u.created_at + interval '${ageHours} hours'`
      : "";
  return `insert into ${table} (bucket, dim, name, account_id)
    with cand as (
      select distinct ev.${grain}_b as bucket, d.dim, d.name, ev.user_id as account_id
      from ev ${aged} cross join lateral (values ('model', ev.model), ('app', ev.app)) as d(dim, name)
      where d.name is not null and ev.status < 400 and not ev.cached and ev.cost_micro > 0),
    grp as (
      select c.bucket, c.dim, c.name, (select count(*) from ${table} s where s.bucket = c.bucket and s.dim = c.dim and s.name = c.name) as have
      from (select distinct bucket, dim, name from cand) c),
    fresh as (
      select c.bucket, c.dim, c.name, c.account_id, g.have, row_number() over (partition by c.bucket, c.dim, c.name order by c.account_id) as rn
      from cand c join grp g on g.bucket = c.bucket and g.dim = c.dim and g.name = c.name
      where g.have < ${cap}
        and not exists (select 1 from ${table} s where s.bucket = c.bucket and s.dim = c.dim and s.name = c.name and s.account_id = c.account_id))
    select bucket, dim, name, account_id from fresh where have + rn <= ${cap}
    on conflict do nothing`;
}

/**
 * The whole fold as one statement (one snapshot). The batch is an id range, not a row count,
 * so it is an index range scan whatever the planner knows about the table: from the first
 * visible id above the watermark (`lo`) to at most `limit` ids further, capped at the newest
 * visible id (`head`). Every id of (watermark, hi] that is not visible comes back as a gap
 * (a hole for later batches). Holes `h` that became visible are folded with it.
 */
function foldStatement(cap: number, ageHours: number): (watermark: number, limit: number, holes: number[]) => SQL {
  const rest = sql.raw(`mh as (${modelUpsert("stats_model_hourly", "hour")}),
  md as (${modelUpsert("stats_model_daily", "day")}),
  ah as (${appUpsert("stats_app_hourly", "hour")}),
  ad as (${appUpsert("stats_app_daily", "day")}),
  kh as (${accountsInsert("stats_hourly_accounts", "hour", cap, ageHours)}),
  kd as (${accountsInsert("stats_daily_accounts", "day", cap, ageHours)}),
  ud as (insert into usage_daily as t (user_id, day, model, requests, failed_requests, cache_hits, prompt_tokens, completion_tokens, cost_micro)
    select user_id, day_d, model, count(*), count(*) filter (where status >= 400), count(*) filter (where cached),
      coalesce(sum(prompt_tokens) filter (where not cached), 0), coalesce(sum(completion_tokens) filter (where not cached), 0),
      coalesce(sum(cost_micro), 0)::bigint
    from ev group by 1, 2, 3
    on conflict (user_id, day, model) do update set
      requests = t.requests + excluded.requests, failed_requests = t.failed_requests + excluded.failed_requests,
      cache_hits = t.cache_hits + excluded.cache_hits, prompt_tokens = t.prompt_tokens + excluded.prompt_tokens,
      completion_tokens = t.completion_tokens + excluded.completion_tokens, cost_micro = t.cost_micro + excluded.cost_micro)
  select (select hi from bounds)::text as upper, (select head from bounds)::text as head, (select count(*) from b)::int as n,
    (select coalesce(json_agg(id), '[]'::json) from h) as found,
    (select coalesce(json_agg(json_build_array(prev + 1, id - 1)), '[]'::json) from g where id - prev > 1) as gaps,
    (select json_build_array(coalesce(max(b.id), lo - 1) + 1, hi) from bounds left join b on true group by lo, hi having hi > coalesce(max(b.id), lo - 1)) as tail`);
  return (wm, limit, holes) => sql`with bounds as (
    select lo, head, least(head, lo + ${limit}::bigint - 1) as hi
    from (select (select min(id) from usage_events where id > ${wm}::bigint) as lo, (select max(id) from usage_events) as head) x
    where lo is not null),
  b as (select e.* from bounds, usage_events e where e.id >= bounds.lo and e.id <= bounds.hi),
  h as (select * from usage_events where id = any(${`{${holes.join(",")}}`}::bigint[]) and id <= ${wm}::bigint),
  ev as materialized (
    select x.*,
      -- UTC buckets by arithmetic on the epoch: cheaper than a time-zone-aware date_trunc per row.
      to_timestamp(floor(extract(epoch from x.created_at) / 3600) * 3600) as hour_b,
      to_timestamp(floor(extract(epoch from x.created_at) / 86400) * 86400) as day_b,
      date '1970-01-01' + floor(extract(epoch from x.created_at) / 86400)::int as day_d
    from (select * from b union all select * from h) x),
  g as (select id, lag(id, 1, ${wm}::bigint) over (order by id) as prev from b),
  ${rest}`;
}

/** Parameters of a window split into two hourly edges and a daily interior ($1..$6). */
function windowParams(w: Window): string[] {
  const { hours, days } = splitWindow(w);
  const empty = { from: new Date(0), to: new Date(0) };
  const [h1 = empty, h2 = empty] = hours;
  const d = days ?? empty;
  return [h1.from, h1.to, h2.from, h2.to, d.from, d.to].map((t) => t.toISOString());
}

/** Rows of an hourly/daily table pair inside the window of `windowParams` ($1..$6). */
function windowed(table: "model" | "app", cols: string, cond = "true"): string {
  return `select ${cols} from stats_${table}_hourly
      where ((bucket >= $1 and bucket < $2) or (bucket >= $3 and bucket < $4)) and ${cond}
    union all
    select ${cols} from stats_${table}_daily where bucket >= $5 and bucket < $6 and ${cond}`;
}

/** Ids of the gaps, newest first, at most `max` of them. */
function expandGaps(gaps: [number, number][], max: number): number[] {
  const out: number[] = [];
  for (let i = gaps.length - 1; i >= 0 && out.length < max; i--) {
    const [lo, hi] = gaps[i]!;
    for (let id = hi; id >= lo && out.length < max; id--) out.push(id);
  }
  return out;
}

export class RollupRepo implements RollupStore, StatsReader {
  private ready = false;
  private readonly fold: ReturnType<typeof foldStatement>;
  constructor(
    private db: Database,
    private o: RollupRepoOptions,
  ) {
    this.fold = foldStatement(
      Math.max(1, Math.floor(o.accountCap)),
      Math.max(0, Math.floor(o.minAccountAgeHours ?? 0)),
    );
  }

  private now(): number {
    return this.o.now?.() ?? Date.now();
  }

  async runBatch(opts: { limit: number; wait: boolean }): Promise<BatchResult> {
    if (!this.ready) {
      await this.db.query("insert into stats_rollup_state (id) values (1) on conflict do nothing");
      this.ready = true;
    }
    const result = await this.db.orm.transaction(async (tx) => {
      const run = async (q: SQL) => rowsOf(await tx.execute(q));
      const locked = await run(
        opts.wait
          ? sql`select watermark::text as watermark, holes from stats_rollup_state where id = 1 for update`
          : sql`select watermark::text as watermark, holes from stats_rollup_state where id = 1 for update skip locked`,
      );
      if (!locked.length)
        return { ran: false, folded: 0, caughtUp: true, watermark: 0, holes: 0 } satisfies BatchResult;
      const state = { watermark: num(locked[0]!.watermark), holes: decodeHoles(parseJson(locked[0]!.holes)) };
      const [r] = await run(
        this.fold(
          state.watermark,
          Math.max(1, Math.floor(opts.limit)),
          state.holes.map((h) => h.id),
        ),
      );
      const n = num(r!.n);
      const found = (parseJson(r!.found) as number[]).map(Number);
      const tail = r!.tail === null ? [] : [parseJson(r!.tail) as [number, number]];
      const gaps = [...(parseJson(r!.gaps) as [number, number][]), ...tail].map(
        ([lo, hi]) => [Number(lo), Number(hi)] as [number, number],
      );
      const upper = r!.upper === null ? null : num(r!.upper);
      const next = nextRollupState(state, { upper, missing: expandGaps(gaps, MAX_HOLES), found }, this.now());
      const folded = n + found.length;
      await run(sql`update stats_rollup_state set watermark = ${next.watermark}, holes = ${JSON.stringify(encodeHoles(next.holes))}::jsonb,
        version = version + ${folded > 0 ? 1 : 0}, events_folded = events_folded + ${folded}, updated_at = now() where id = 1`);
      // Pruning rides along at most once an hour, under the same lock (so once for all instances).
      const now = new Date(this.now()).toISOString();
      const due = await run(sql`update stats_rollup_state set pruned_at = ${now}::timestamptz
        where id = 1 and (pruned_at is null or pruned_at <= ${now}::timestamptz - interval '1 hour' or pruned_at > ${now}::timestamptz) returning 1 as due`);
      if (due.length) for (const q of pruneStatements(now)) await run(q);
      return {
        ran: true,
        folded,
        caughtUp: upper === null || upper >= num(r!.head),
        watermark: next.watermark,
        holes: next.holes.length,
      } satisfies BatchResult;
    });
    return result;
  }

  async version(): Promise<number> {
    const rows = await this.db.query<{ v: string }>("select version::text as v from stats_rollup_state where id = 1");
    return rows.length ? Number(rows[0]!.v) : 0;
  }

  async modelCalls(w: Window): Promise<{ model: string; calls: number }[]> {
    const rows = await this.db.query<{ model: string; calls: number }>(
      `select model, sum(calls)::float8 as calls from (${windowed("model", "model, calls")}) x group by model`,
      windowParams(w),
    );
    return rows.map((r) => ({ model: r.model, calls: num(r.calls) }));
  }

  async modelTokens(w: Window): Promise<ModelTokenRow[]> {
    const rows = await this.db.query<Record<string, unknown>>(
      `select model, provider, maker, sum(calls)::float8 as calls, sum(prompt_tokens + completion_tokens)::float8 as tokens
         from (${windowed("model", "model, provider, maker, calls, prompt_tokens, completion_tokens", "success")}) x
        group by model, provider, maker`,
      windowParams(w),
    );
    return rows.map((r) => ({
      model: String(r.model),
      provider: String(r.provider),
      maker: String(r.maker),
      calls: num(r.calls),
      tokens: num(r.tokens),
    }));
  }

  async textTokenSeries(w: Window, granularity: Granularity): Promise<SeriesRow[]> {
    // 2001-01-01 was a Monday: 7-day bins from it are ISO weeks.
    const rows = await this.db.query<Record<string, unknown>>(
      `select date_bin($3::interval, bucket, timestamptz '2001-01-01 00:00:00+00') as t, model,
              sum(prompt_tokens + completion_tokens)::float8 as tokens
         from stats_model_daily
        where bucket >= $1 and bucket < $2 and success and modality = 'text'
        group by 1, 2`,
      [w.from.toISOString(), w.to.toISOString(), granularity === "day" ? "1 day" : "7 days"],
    );
    return rows.map((r) => ({ t: new Date(r.t as string | Date), model: String(r.model), tokens: num(r.tokens) }));
  }

  async appTokens(w: Window): Promise<{ app: string; calls: number; tokens: number }[]> {
    const rows = await this.db.query<Record<string, unknown>>(
      `select app, sum(calls)::float8 as calls, sum(prompt_tokens + completion_tokens)::float8 as tokens
         from (${windowed("app", "app, calls, prompt_tokens, completion_tokens", "success")}) x group by app`,
      windowParams(w),
    );
    return rows.map((r) => ({ app: String(r.app), calls: num(r.calls), tokens: num(r.tokens) }));
  }

  async eligible(dim: StatsDimension, w: Window, minAccounts: number): Promise<Set<string>> {
    const rows = await this.db.query<{ name: string }>(
      `select name from (
         select name, account_id from stats_hourly_accounts where ((bucket >= $1 and bucket < $2) or (bucket >= $3 and bucket < $4)) and dim = $7
         union all
         select name, account_id from stats_daily_accounts where bucket >= $5 and bucket < $6 and dim = $7
       ) x group by name having count(distinct account_id) >= $8`,
      [...windowParams(w), dim, minAccounts],
    );
    return new Set(rows.map((r) => r.name));
  }

  async usageDaily(userId: string, from: string, to: string): Promise<DailyUsageRow[]> {
    const rows = await this.db.query<Record<string, unknown>>(
      `select day::text as day, model, requests::float8 as requests, failed_requests::float8 as failed_requests, cache_hits::float8 as cache_hits,
              prompt_tokens::float8 as prompt_tokens, completion_tokens::float8 as completion_tokens, cost_micro::text as cost_micro
         from usage_daily where user_id = $1 and day >= $2::date and day <= $3::date`,
      [userId, from, to],
    );
    return rows.map((r) => ({
      day: String(r.day),
      model: String(r.model),
      requests: num(r.requests),
      failedRequests: num(r.failed_requests),
      cacheHits: num(r.cache_hits),
      promptTokens: num(r.prompt_tokens),
      completionTokens: num(r.completion_tokens),
      costMicro: BigInt(String(r.cost_micro)),
    }));
  }
}

function parseJson(v: unknown): unknown {
  return typeof v === "string" ? JSON.parse(v) : v;
}
