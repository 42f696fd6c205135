/**
 * The usage report of `GET /v1/usage/report`: one account's calls, tokens and exact cost per
 * UTC day and model, read from the daily rollup. Days without usage have no row.
 */
import { microToKrw } from "../../lib/money";
import type { StatsReader } from "./ports";
import type { UsageReport } from "./shapes";

export async function usageReport(
  reader: StatsReader,
  userId: string,
  range: { from: string; to: string },
  now: Date,
): Promise<UsageReport> {
  const rows = await reader.usageDaily(userId, range.from, range.to);
  rows.sort((a, b) => (a.day < b.day ? -1 : a.day > b.day ? 1 : a.model < b.model ? -1 : a.model > b.model ? 1 : 0));
  const sum = {
    requests: 0,
    failed_requests: 0,
    cache_hits: 0,
    prompt_tokens: 0,
    completion_tokens: 0,
    total_tokens: 0,
  };
  let cost = 0n;
  const data = rows.map((r) => {
    sum.requests += r.requests;
    sum.failed_requests += r.failedRequests;
    sum.cache_hits += r.cacheHits;
    sum.prompt_tokens += r.promptTokens;
    sum.completion_tokens += r.completionTokens;
    sum.total_tokens += r.promptTokens + r.completionTokens;
    cost += r.costMicro;
    return {
      date: r.day,
      model: r.model,
      requests: r.requests,
      failed_requests: r.failedRequests,
      cache_hits: r.cacheHits,
      prompt_tokens: r.promptTokens,
      completion_tokens: r.completionTokens,
      total_tokens: r.promptTokens + r.completionTokens,
      cost_krw: microToKrw(r.costMicro),
    };
  });
  return {
    object: "usage_report",
    from: range.from,
    to: range.to,
    currency: "KRW",
    generated_at: now.toISOString(),
    data,
    totals: { ...sum, cost_krw: microToKrw(cost) },
  };
}
