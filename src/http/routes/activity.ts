/**
 * The account's calls: `GET /v1/activity` (newest first, keyset-paginated, filtered),
 * `GET /v1/activity/summary` (the overview's daily aggregates) and
 * `GET /v1/generations/{request_id}` (one call, as OpenRouter's generation endpoint gives it).
 * A dashboard JWT reads the whole account; an API key with `usage:read` its own calls.
 */
import { Elysia } from "elysia";
import { ActivityRepo } from "../../db/repos/activity";
import { AttemptTrailRepo } from "../../db/repos/attempt-trails";
import { activitySummary } from "../../db/repos/activity-summary";
import { activityReader } from "../activity/caller";
import { encodeCursor, parseActivityQuery, parseSummaryDays } from "../activity/query";
import { toActivity, toGeneration, toSummary } from "../activity/records";
import type { AppDeps } from "../deps";
import { notFound, requireUuid } from "../params";
import { AUTH } from "../security";
import { errors, ok } from "../openapi/describe";
import { ActivityPage, ActivitySummary, Generation } from "../openapi/activity-shapes";

const q = (name: string, schema: object, description: string) => ({ name, in: "query", schema, description });
const FILTERS = [
  q("key_id", { type: "string", format: "uuid" }, "Only this key's calls (an API key always reads only its own)"),
  q("model", { type: "string", maxLength: 200 }, "Only this model id"),
  q("request_id", { type: "string", format: "uuid" }, "Only this request (the X-Request-Id of its response)"),
  q("status", { type: "string" }, "An HTTP status (e.g. 502), `success` (2xx) or `error` (anything else)"),
  q("from", { type: "string" }, "From this UTC date (YYYY-MM-DD) or RFC 3339 time, inclusive"),
  q("to", { type: "string" }, "Until this time, exclusive; a date includes its whole UTC day"),
  q("limit", { type: "integer", minimum: 1, maximum: 200, default: 50 }, "Page size"),
  q("cursor", { type: "string" }, "next_cursor of the previous page"),
];

export function activityRoutes(deps: AppDeps) {
  const repo = new ActivityRepo(deps.db);
  const trails = new AttemptTrailRepo(deps.db);
  const DAY_MS = 86_400_000;
  return new Elysia({ name: "activity", normalize: false })
    .get(
      "/v1/activity",
      async ({ request, server, set }) => {
        const who = await activityReader(deps, request, server, set.headers);
        const filter = parseActivityQuery(new URL(request.url).searchParams, who.userId);
        // A key asking for another key's calls gets none: it only ever sees its own.
        if (who.keyId && filter.keyId && filter.keyId !== who.keyId)
          return { object: "list", data: [], has_more: false, next_cursor: null };
        if (who.keyId) filter.keyId = who.keyId;
        const rows = await repo.list(filter);
        const more = rows.length > filter.limit;
        const page = more ? rows.slice(0, filter.limit) : rows;
        return {
          object: "list",
          data: page.map(toActivity),
          has_more: more,
          next_cursor: more ? encodeCursor(page[page.length - 1]!.id) : null,
        };
      },
      {
        detail: {
          security: AUTH.apiKeyOrDashboard,
          tags: ["usage"],
          summary: "The account's calls, newest first (JWT: the whole account; API key with usage:read: its own calls)",
          parameters: FILTERS,
          responses: { ...ok(ActivityPage), ...errors(403) },
        },
      },
    )
    .get(
      "/v1/activity/summary",
      async ({ request, set }) => {
        const user = await deps.auth.jwtUser(request);
        const days = parseSummaryDays(new URL(request.url).searchParams);
        const today = Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), new Date().getUTCDate());
        const since = new Date(today - (days - 1) * DAY_MS);
        const month = new Date(Date.UTC(new Date(today).getUTCFullYear(), new Date(today).getUTCMonth(), 1));
        set.headers["cache-control"] = "private, no-store";
        return toSummary(await activitySummary(deps.db, user.id, since, month), days, since, month);
      },
      {
        detail: {
          security: AUTH.dashboard,
          tags: ["usage"],
          summary:
            "The account's figures from its usage events (deleted keys included): this UTC month's spend and requests (per key too); over the last `days` UTC days (today included) daily spend and tokens by model, spend and requests by key, requests by status, latency p50/p95 by provider and by modality, time to first token of streamed text calls; and the day of the account's first call",
          parameters: [
            q("days", { type: "integer", minimum: 1, maximum: 90, default: 30 }, "How many UTC days, today included"),
          ],
          responses: ok(ActivitySummary),
        },
      },
    )
    .get(
      "/v1/generations/:request_id",
      async ({ request, server, set, params }) => {
        const who = await activityReader(deps, request, server, set.headers);
        const id = requireUuid(params.request_id, "request_id");
        const row = await repo.one(who.userId, id, who.keyId);
        if (!row) throw notFound("요청");
        return toGeneration(row, await trails.of(who.userId, id));
      },
      {
        detail: {
          security: AUTH.apiKeyOrDashboard,
          tags: ["usage"],
          summary:
            "One call's record: tokens, cost, provider, latency, status, and the attempt trail of a call that needed more than one attempt (another account's request id is 404)",
          responses: { ...ok(Generation), ...errors(403, 404) },
        },
      },
    );
}
