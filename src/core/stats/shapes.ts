/**
 * Response bodies of the public statistics and the usage report. Hand-written wire schemas
 * (the specification's "Public statistics objects"); the types derive from them.
 */
import { Type as T, type Static } from "@sinclair/typebox";

const Period = T.Union([T.Literal("daily"), T.Literal("weekly"), T.Literal("monthly")]);
const Count = T.Integer({ minimum: 0 });

export const ModelsStatsSchema = T.Object({
  period: Period,
  generated_at: T.String({ format: "date-time" }),
  total_calls: Count,
  top_models: T.Array(T.Object({ model: T.String(), calls: Count })),
});
export type ModelsStats = Static<typeof ModelsStatsSchema>;

export const RankingsSchema = T.Object({
  period: Period,
  generated_at: T.String({ format: "date-time" }),
  total_tokens: Count,
  leaderboard: T.Array(
    T.Object({
      rank: T.Integer({ minimum: 1 }),
      model: T.String(),
      /** The provider that served most of this model's tokens in the period. */
      provider: T.Union([T.String(), T.Null()]),
      maker: T.Union([T.String(), T.Null()]),
      tokens: Count,
      calls: Count,
      trend_pct: T.Union([T.Number(), T.Null()]),
    }),
  ),
  market_share: T.Array(T.Object({ provider: T.String(), tokens: Count, share_pct: T.Number() })),
});
export type Rankings = Static<typeof RankingsSchema>;

export const UsageTimeseriesSchema = T.Object({
  range: T.Union([T.Literal("30d"), T.Literal("12w"), T.Literal("24w")]),
  granularity: T.Union([T.Literal("day"), T.Literal("week")]),
  generated_at: T.String({ format: "date-time" }),
  series: T.Array(T.String()),
  points: T.Array(
    T.Object({
      /** The bucket's first day, `YYYY-MM-DD` (a Monday for weekly buckets). */
      t: T.String(),
      tokens: T.Record(T.String(), Count),
      total: Count,
    }),
  ),
  total_tokens: Count,
});
export type UsageTimeseries = Static<typeof UsageTimeseriesSchema>;

export const AppsStatsSchema = T.Object({
  period: Period,
  generated_at: T.String({ format: "date-time" }),
  total_tokens: Count,
  apps: T.Array(T.Object({ rank: T.Integer({ minimum: 1 }), app: T.String(), tokens: Count, calls: Count })),
});
export type AppsStats = Static<typeof AppsStatsSchema>;

const ReportFigures = {
  requests: Count,
  failed_requests: Count,
  cache_hits: Count,
  prompt_tokens: Count,
  completion_tokens: Count,
  total_tokens: Count,
  /** Exact cost in KRW with up to 6 decimals. */
  cost_krw: T.Number(),
};

export const UsageReportSchema = T.Object({
  object: T.Literal("usage_report"),
  from: T.String(),
  to: T.String(),
  currency: T.Literal("KRW"),
  generated_at: T.String({ format: "date-time" }),
  data: T.Array(T.Object({ date: T.String(), model: T.String(), ...ReportFigures })),
  totals: T.Object(ReportFigures),
});
export type UsageReport = Static<typeof UsageReportSchema>;
