/**
 * The overview's aggregates over the account's usage events (every key's, deleted keys
 * included): spend and tokens per day and model, spend and requests per day and key, requests
 * per day and status, latency percentiles per day and provider and per day and modality, time to first token of
 * streamed text calls, this month's totals per key, and the day of the account's first call.
 * The cost of a usage event is what the ledger charged for the call (the settle writes both).
 */
import type { Database } from "../client";

export interface DailyModelRow {
  day: string;
  model: string;
  requests: number;
  cost_micro: string;
  prompt_tokens: string;
  completion_tokens: string;
}
export interface DailyKeyRow {
  day: string;
  key_id: string | null;
  requests: number;
  cost_micro: string;
}
export interface DailyStatusRow {
  day: string;
  status: number;
  requests: number;
}
export interface DailyLatencyRow {
  day: string;
  provider: string;
  p50: number | null;
  p95: number | null;
}
export interface DailyModalityRow {
  day: string;
  modality: string;
  p50: number | null;
  p95: number | null;
}
export interface DailyTtftRow {
  day: string;
  p50: number | null;
  p95: number | null;
}
export interface KeyTotalRow {
  key_id: string | null;
  name: string | null;
  deleted: boolean;
  requests: number;
  cost_micro: string;
}

const DAY = `to_char(e.created_at at time zone 'UTC', 'YYYY-MM-DD')`;
const PCT = (col: string) =>
  `percentile_cont(0.5) within group (order by ${col}) as p50, percentile_cont(0.95) within group (order by ${col}) as p95`;

/** Per key since `from`, with its name (a deleted key keeps its name and is marked deleted). */
function keyTotals(db: Database, userId: string, from: Date) {
  return db.query<KeyTotalRow>(
    `select e.key_id, k.name, (k.deleted_at is not null) as deleted, count(*)::int as requests,
            sum(e.cost_micro)::text as cost_micro
       from usage_events e left join api_keys k on k.id = e.key_id
      where e.user_id = $1 and e.created_at >= $2
      group by e.key_id, k.name, k.deleted_at order by sum(e.cost_micro) desc, e.key_id`,
    [userId, from.toISOString()],
  );
}

export async function activitySummary(db: Database, userId: string, since: Date, monthStart: Date) {
  const p = [userId, since.toISOString()];
  const scope = `from usage_events e where e.user_id = $1 and e.created_at >= $2`;
  const [byModel, byKey, byStatus, latency, modality, ttft, keys, month, first] = await Promise.all([
    db.query<DailyModelRow>(
      `select ${DAY} as day, e.model, count(*)::int as requests, sum(e.cost_micro)::text as cost_micro,
              sum(e.prompt_tokens)::text as prompt_tokens, sum(e.completion_tokens)::text as completion_tokens
         ${scope} group by 1, 2 order by 1, 2`,
      p,
    ),
    db.query<DailyKeyRow>(
      `select ${DAY} as day, e.key_id, count(*)::int as requests, sum(e.cost_micro)::text as cost_micro
         ${scope} group by 1, 2 order by 1, 2`,
      p,
    ),
    db.query<DailyStatusRow>(
      `select ${DAY} as day, e.status, count(*)::int as requests ${scope} group by 1, 2 order by 1, 2`,
      p,
    ),
    db.query<DailyLatencyRow>(
      `select ${DAY} as day, e.provider, ${PCT("e.latency_ms")}
         ${scope} and e.provider is not null and e.latency_ms is not null and e.cached = false group by 1, 2 order by 1, 2`,
      p,
    ),
    // Per modality: a video job's minutes and a chat's seconds are not read on one scale.
    db.query<DailyModalityRow>(
      `select ${DAY} as day, e.modality, ${PCT("e.latency_ms")}
         ${scope} and e.latency_ms is not null and e.cached = false and e.status between 200 and 299
         group by 1, 2 order by 1, 2`,
      p,
    ),
    db.query<DailyTtftRow>(
      `select ${DAY} as day, ${PCT("e.ttft_ms")}
         ${scope} and e.ttft_ms is not null and e.modality = 'text' and e.cached = false group by 1 order by 1`,
      p,
    ),
    keyTotals(db, userId, since),
    keyTotals(db, userId, monthStart),
    db.query<{ first: string | null }>(
      `select to_char(min(e.created_at) at time zone 'UTC', 'YYYY-MM-DD') as first from usage_events e where e.user_id = $1`,
      [userId],
    ),
  ]);
  return { byModel, byKey, byStatus, latency, modality, ttft, keys, month, first: first[0]?.first ?? null };
}
