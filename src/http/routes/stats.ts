/**
 * Public statistics (no authentication): `/v1/stats/models`, `/rankings`, `/usage-timeseries`
 * and `/apps`. Handlers validate the query and delegate to the StatsService, which reads only
 * rollups; responses may be cached publicly for as long as the rollups may lag.
 */
import { Elysia } from "elysia";
import { parsePeriodQuery, parseTimeseriesQuery, type Query, type StatsService } from "../../core/stats";
import { named, ok } from "../openapi/describe";
import { AppsStatsSchema, ModelsStatsSchema, RankingsSchema, UsageTimeseriesSchema } from "../../core/stats/shapes";

export interface StatsRouteDeps {
  stats: StatsService;
  /** Cache-Control max-age: the rollups' freshness bound (docs/decisions.md #14). */
  maxAgeSeconds: number;
}

const periodDoc = {
  name: "period",
  in: "query" as const,
  schema: { type: "string" as const, enum: ["daily", "weekly", "monthly"] },
};

export function statsRoutes(deps: StatsRouteDeps) {
  const cache = (set: { headers: Record<string, unknown> }) => {
    set.headers["cache-control"] = `public, max-age=${deps.maxAgeSeconds}`;
  };
  return new Elysia({ name: "stats", normalize: false })
    .get(
      "/v1/stats/models",
      async ({ query, set }) => {
        const { period } = parsePeriodQuery(query as Query, "daily");
        cache(set);
        return deps.stats.models(period);
      },
      {
        response: { 200: ModelsStatsSchema },
        detail: {
          tags: ["stats"],
          summary: "Top 20 models by calls in the period (default daily), and total calls",
          security: [],
          parameters: [periodDoc],
          responses: ok(named("ModelsStats", ModelsStatsSchema)),
        },
      },
    )
    .get(
      "/v1/stats/rankings",
      async ({ query, set }) => {
        const { period } = parsePeriodQuery(query as Query, "weekly");
        cache(set);
        return deps.stats.rankings(period);
      },
      {
        response: { 200: RankingsSchema },
        detail: {
          responses: ok(named("Rankings", RankingsSchema)),
          tags: ["stats"],
          summary:
            "Top 20 models by tokens with trend, and the top 12 providers' market share (default weekly); failed calls excluded",
          security: [],
          parameters: [periodDoc],
        },
      },
    )
    .get(
      "/v1/stats/usage-timeseries",
      async ({ query, set }) => {
        const q = parseTimeseriesQuery(query as Query);
        cache(set);
        return deps.stats.timeseries(q);
      },
      {
        response: { 200: UsageTimeseriesSchema },
        detail: {
          responses: ok(named("UsageTimeseries", UsageTimeseriesSchema)),
          tags: ["stats"],
          summary: "Text tokens per day or ISO week of the top models, the rest as Others",
          security: [],
          parameters: [
            { name: "range", in: "query", schema: { type: "string", enum: ["30d", "12w", "24w"] } },
            { name: "granularity", in: "query", schema: { type: "string", enum: ["day", "week"] } },
            { name: "top", in: "query", schema: { type: "integer", minimum: 1, maximum: 20 } },
          ],
        },
      },
    )
    .get(
      "/v1/stats/apps",
      async ({ query, set }) => {
        const { period } = parsePeriodQuery(query as Query, "weekly");
        cache(set);
        return deps.stats.apps(period);
      },
      {
        response: { 200: AppsStatsSchema },
        detail: {
          tags: ["stats"],
          summary: "Top 20 apps (X-Title / HTTP-Referer) by tokens in the period (default weekly)",
          security: [],
          parameters: [periodDoc],
          responses: ok(named("AppsStats", AppsStatsSchema)),
        },
      },
    );
}
