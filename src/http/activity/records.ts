/** Usage-event rows as the activity API shows them (amounts in KRW, times in RFC 3339). */
import { microToKrw, microToUsd } from "../../lib/money";
import type { ActivityRow } from "../../db/repos/activity";
import type { TrailAttempt } from "../../core/chat/trail";
import type { activitySummary } from "../../db/repos/activity-summary";

const iso = (t: Date | string) => (t instanceof Date ? t : new Date(t)).toISOString();

export function toActivity(r: ActivityRow) {
  const micro = BigInt(r.cost_micro);
  return {
    request_id: r.request_id,
    created_at: iso(r.created_at),
    key_id: r.key_id,
    model: r.model,
    provider: r.provider,
    modality: r.modality,
    app: r.app,
    api: r.api,
    status: r.status,
    error_code: r.error_code,
    streamed: r.streamed,
    prompt_tokens: r.prompt_tokens,
    completion_tokens: r.completion_tokens,
    cached_tokens: r.cached_tokens,
    cache_write_tokens: r.cache_write_tokens,
    cost_krw: microToKrw(micro),
    cost_usd: r.fx_milli ? microToUsd(micro, BigInt(r.fx_milli)) : null,
    latency_ms: r.latency_ms,
    ttft_ms: r.ttft_ms,
    cache_hit: r.cached,
    policy_decision: r.policy_decision,
  };
}

/** One call in the shape of OpenRouter's generation endpoint (`data` with its field names), plus ours. */
export function toGeneration(r: ActivityRow, attempts: TrailAttempt[] | null = null) {
  const a = toActivity(r);
  return {
    data: {
      id: a.request_id,
      created_at: a.created_at,
      model: a.model,
      provider_name: a.provider,
      app: a.app,
      api_key_id: a.key_id,
      status: a.status,
      tokens_prompt: a.prompt_tokens,
      tokens_completion: a.completion_tokens,
      native_tokens_cached: a.cached_tokens,
      native_tokens_cache_write: a.cache_write_tokens,
      total_cost: a.cost_usd,
      total_cost_krw: a.cost_krw,
      latency: a.latency_ms,
      time_to_first_token: a.ttft_ms,
      streamed: a.streamed,
      api: a.api,
      error_code: a.error_code,
      policy_decision: a.policy_decision,
      cache_hit: a.cache_hit,
      modality: a.modality,
      attempts,
    },
  };
}

type Summary = Awaited<ReturnType<typeof activitySummary>>;

const ms = (v: number | null) => (v === null ? null : Math.round(Number(v)));
const keyTotal = (r: Summary["keys"][number]) => ({
  key_id: r.key_id,
  name: r.name,
  deleted: r.deleted,
  requests: r.requests,
  cost_krw: microToKrw(BigInt(r.cost_micro)),
});

/**
 * The overview's figures. `month` is the current UTC month's spend and requests of every key
 * the account ever had (deleted ones included), summed in micro-won before the one conversion.
 */
export function toSummary(s: Summary, days: number, since: Date, monthStart: Date) {
  let requests = 0;
  let micro = 0n;
  let tokens = 0;
  for (const r of s.byModel) {
    requests += r.requests;
    micro += BigInt(r.cost_micro);
    tokens += Number(r.prompt_tokens) + Number(r.completion_tokens);
  }
  let monthRequests = 0;
  let monthMicro = 0n;
  for (const r of s.month) {
    monthRequests += r.requests;
    monthMicro += BigInt(r.cost_micro);
  }
  return {
    days,
    from: since.toISOString().slice(0, 10),
    first_activity: s.first,
    totals: { requests, cost_krw: microToKrw(micro), tokens },
    month: {
      from: monthStart.toISOString().slice(0, 10),
      requests: monthRequests,
      cost_krw: microToKrw(monthMicro),
      by_key: s.month.map(keyTotal),
    },
    keys: s.keys.map(keyTotal),
    by_model: s.byModel.map((r) => ({
      date: r.day,
      model: r.model,
      requests: r.requests,
      cost_krw: microToKrw(BigInt(r.cost_micro)),
      prompt_tokens: Number(r.prompt_tokens),
      completion_tokens: Number(r.completion_tokens),
    })),
    by_key: s.byKey.map((r) => ({
      date: r.day,
      key_id: r.key_id,
      requests: r.requests,
      cost_krw: microToKrw(BigInt(r.cost_micro)),
    })),
    by_status: s.byStatus.map((r) => ({ date: r.day, status: r.status, requests: r.requests })),
    latency: s.latency.map((r) => ({ date: r.day, provider: r.provider, p50_ms: ms(r.p50), p95_ms: ms(r.p95) })),
    latency_by_modality: s.modality.map((r) => ({
      date: r.day,
      modality: r.modality,
      p50_ms: ms(r.p50),
      p95_ms: ms(r.p95),
    })),
    ttft: s.ttft.map((r) => ({ date: r.day, p50_ms: ms(r.p50), p95_ms: ms(r.p95) })),
  };
}
