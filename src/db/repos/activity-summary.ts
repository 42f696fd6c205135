/**
 * The overview's aggregates over the account's usage events of the last N UTC days: spend and
 * tokens per day and model, requests per day and status, latency percentiles per day and provider.
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

const DAY = `to_char(e.created_at at time zone 'UTC', 'YYYY-MM-DD')`;

export async function activitySummary(db: Database, userId: string, since: Date) {
  const p = [userId, since.toISOString()];
  const scope = `from usage_events e where e.user_id = $1 and e.created_at >= $2`;
  const [byModel, byStatus, latency] = await Promise.all([
    db.query<DailyModelRow>(
      `select ${DAY} as day, e.model, count(*)::int as requests, sum(e.cost_micro)::text as cost_micro,
              sum(e.prompt_tokens)::text as prompt_tokens, sum(e.completion_tokens)::text as completion_tokens
         ${scope} group by 1, 2 order by 1, 2`,
      p,
    ),
    db.query<DailyStatusRow>(
      `select ${DAY} as day, e.status, count(*)::int as requests ${scope} group by 1, 2 order by 1, 2`,
      p,
    ),
    db.query<DailyLatencyRow>(
      `select ${DAY} as day, e.provider,
              percentile_cont(0.5) within group (order by e.latency_ms) as p50,
              percentile_cont(0.95) within group (order by e.latency_ms) as p95
         ${scope} and e.provider is not null and e.latency_ms is not null and e.cached = false group by 1, 2 order by 1, 2`,
      p,
    ),
  ]);
  return { byModel, byStatus, latency };
}
