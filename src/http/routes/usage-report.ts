/**
 * `GET /v1/usage/report`: the calling account's usage per UTC day and model, for an API key
 * with the `usage:read` scope (or a legacy key without scopes). Read from the daily rollup.
 */
import { Elysia } from "elysia";
import { parseReportQuery, usageReport, type Query, type StatsReader } from "../../core/stats";
import { UsageReportSchema } from "../../core/stats/shapes";
import { apiKeyAuth } from "../api-key-auth";
import type { AppDeps } from "../deps";
import { AUTH } from "../security";
import { named, ok } from "../openapi/describe";

export function usageReportRoutes(deps: AppDeps, reader: StatsReader) {
  return new Elysia({ name: "usage-report", normalize: false }).use(apiKeyAuth(deps.auth)).get(
    "/v1/usage/report",
    async ({ query, set, principal }) => {
      const now = new Date();
      const range = parseReportQuery(query as Query, now);
      set.headers["cache-control"] = "private, no-store";
      return usageReport(reader, principal.user.id, range, now);
    },
    {
      apiKey: "usage:read",
      response: { 200: UsageReportSchema },
      detail: {
        security: AUTH.apiKey,
        responses: ok(named("UsageReport", UsageReportSchema)),
        tags: ["usage"],
        summary:
          "The account's calls, tokens and cost (KRW) per UTC day and model; from/to are YYYY-MM-DD, default the last 30 days, at most 366 days",
        parameters: [
          { name: "from", in: "query", schema: { type: "string", format: "date" } },
          { name: "to", in: "query", schema: { type: "string", format: "date" } },
        ],
      },
    },
  );
}
