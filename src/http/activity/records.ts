/** Usage-event rows as the activity API shows them (amounts in KRW, times in RFC 3339). */
import { microToKrw, microToUsd } from "../../lib/money";
import type { ActivityRow } from "../../db/repos/activity";
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
export function toGeneration(r: ActivityRow) {
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
    },
  };
}

type Summary = Awaited<ReturnType<typeof activitySummary>>;

export function toSummary(s: Summary, days: number, since: Date) {
  let requests = 0;
  let micro = 0n;
  let tokens = 0;
  for (const r of s.byModel) {
    requests += r.requests;
    micro += BigInt(r.cost_micro);
    tokens += Number(r.prompt_tokens) + Number(r.completion_tokens);
  }
  return {
    days,
    from: since.toISOString().slice(0, 10),
    totals: { requests, cost_krw: microToKrw(micro), tokens },
    by_model: s.byModel.map((r) => ({
      date: r.day,
      model: r.model,
      requests: r.requests,
      cost_krw: microToKrw(BigInt(r.cost_micro)),
      prompt_tokens: Number(r.prompt_tokens),
      completion_tokens: Number(r.completion_tokens),
    })),
    by_status: s.byStatus.map((r) => ({ date: r.day, status: r.status, requests: r.requests })),
    latency: s.latency.map((r) => ({
      date: r.day,
      provider: r.provider,
      p50_ms: r.p50 === null ? null : Math.round(Number(r.p50)),
      p95_ms: r.p95 === null ? null : Math.round(Number(r.p95)),
    })),
  };
}
