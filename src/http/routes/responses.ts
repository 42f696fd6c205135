/**
 * POST /v1/responses (the Responses-format adapter) and its feedback endpoint. The adapter
 * converts into the same chat call as /v1/chat/completions, so routing, billing, cache,
 * masking and errors are the chat service's; only the wire format differs. An upstream that
 * speaks the Responses API (OpenAI) gets the client's own body, and its answer or stream is
 * relayed as it came, with the cost added (docs/responses.md, "Relayed or translated").
 */
import { Elysia } from "elysia";
import { GatewayError, text } from "../../core/errors";
import { accountRequestId } from "../../core/billing/request-id";
import { parseWebPlugin } from "../../core/chat/web-search";
import type { FeedbackRepo } from "../../db/repos/feedback";
import { feedbackJson, FeedbackBodySchema, ratingValue, type FeedbackBody } from "../../surfaces/responses/feedback";
import { echoOf, outputItems, responseObject } from "../../surfaces/responses/from-core";
import { nativeResponses } from "../../surfaces/responses/native";
import { relayResponsesStream } from "../../surfaces/responses/relay";
import { requestIdFromPath, responseId } from "../../surfaces/responses/ids";
import { dropNulls, ResponsesBodySchema, type ResponsesBody } from "../../surfaces/responses/schema";
import { responsesEventStream } from "../../surfaces/responses/stream";
import { toCoreFromResponses } from "../../surfaces/responses/to-core";
import { resolveInput } from "../../surfaces/responses/history";
import {
  historyOf,
  keepResponse,
  keeps,
  NOT_STORED_HEADER,
  notStoredValue,
  type ResponseStore,
} from "./responses-store";
import { apiKeyAuth } from "../api-key-auth";
import type { AppDeps } from "../deps";
import { notFound } from "../params";
import { requestId } from "../request-id";
import { callerOf } from "../caller";
import { runHeaders, streamHeaders, type ChatRouteDeps } from "./chat";
import { AUTH } from "../security";
import { created, errors, okOrStream, withHeaders } from "../openapi/describe";
import { Feedback, ResponseObject } from "../../surfaces/responses/schemas";

export interface ResponsesRouteDeps extends ChatRouteDeps {
  feedback: FeedbackRepo;
  store: ResponseStore;
}

export function responsesRoutes(deps: AppDeps, route: ResponsesRouteDeps) {
  return new Elysia({ name: "responses", normalize: false })
    .use(apiKeyAuth(deps.auth))
    .post(
      "/v1/responses",
      async ({ request, body, set, principal, rateLimitHeaders: headers }) => {
        using slot = await deps.calls.take(principal, request);
        const b = body as ResponsesBody;
        // Earlier turns are resolved (or refused) before any credit is held.
        const owner = { userId: principal.user.id, keyId: principal.keyId };
        const turns = await resolveInput(b, historyOf(route.store, owner));
        const core = toCoreFromResponses({ ...b, input: turns.input }, turns.prior);
        const context = [...turns.prior, ...turns.input];
        // A context that cannot be kept (too large, or past the account's stored-bytes quota)
        // keeps nothing of this call, and says so up front (a stream's headers leave first).
        const refused = keeps(route.store, b) ? await route.store.repo.refusal(owner.userId, context) : null;
        let notKept = refused && notStoredValue(refused);
        const store = keeps(route.store, b) && !notKept;
        // The client's own body, for an upstream that speaks the Responses API (OpenAI): relayed there.
        const native = nativeResponses(b, store);
        if (native) core.request.responses = native;
        const id = requestId(request);
        const caller = callerOf(request, principal, "responses");
        const stream = b.stream === true;
        const run = await route.chat.run(caller, {
          model: b.model,
          request: core.request,
          prefs: b.provider,
          traceId: b.trace_id,
          reasoningMode: core.reasoningMode,
          web: parseWebPlugin(b.plugins),
          stream,
          relay: "responses",
        });
        const keep = store
          ? async (r: ReturnType<typeof responseObject>) => {
              notKept = notStoredValue(await keepResponse(route.store, owner, context, r));
              return notKept === null;
            }
          : undefined;
        const meta = {
          id: responseId(id),
          createdAt: Math.floor(Date.now() / 1000),
          echo: echoOf(b, core.request, { store, previousId: turns.previousId }),
          keepaliveMs: route.keepaliveMs,
          keep,
        };
        // runHeaders may answer a shared empty set: copied before one is added.
        const own = notKept
          ? { ...runHeaders(deps.metrics, run), [NOT_STORED_HEADER]: notKept }
          : runHeaders(deps.metrics, run);
        if (run.kind === "stream") {
          const out = run.stream.head.relayed
            ? relayResponsesStream(run.stream, meta.id, route.keepaliveMs)
            : responsesEventStream(run.stream, meta);
          return slot.untilEnd(new Response(out, { headers: streamHeaders(headers, id, own) }));
        }
        const o = run.outcome;
        Object.assign(set.headers, own);
        set.headers["x-cost-krw"] = String(o.cost.krw);
        set.headers["x-cost-usd"] = String(o.cost.usd);
        // OpenAI's own response, as it came (reasoning items and all), under the gateway's id, with
        // `provider` and `cached` added; the cost is in X-Cost-KRW / X-Cost-USD, as on a translated answer.
        if (o.result.vendorBody) return { ...o.result.vendorBody, id: meta.id, provider: o.provider, cached: false };
        const response = responseObject(
          { ...meta, model: o.model, provider: o.provider },
          {
            status: "completed",
            output: outputItems(o.result, o.citations),
            usage: o.result.usage,
            finish: o.result.finishReason,
            cached: o.cached,
          },
        );
        if (keep && !(await keep(response))) {
          response.store = false;
          set.headers[NOT_STORED_HEADER] = notKept!;
        }
        return response;
      },
      {
        apiKey: "model",
        body: ResponsesBodySchema,
        transform: ({ body }) => dropNulls(body),
        detail: {
          security: AUTH.apiKey,
          tags: ["responses"],
          summary: "Responses-format call (converted into a chat call), optionally streamed",
          responses: {
            ...withHeaders(
              okOrStream(ResponseObject, "`response.*` events, then `data: [DONE]`"),
              "X-Cost-KRW",
              "X-Cost-USD",
              "X-Policy-Decision",
              "X-Response-Stored",
              "X-Gateway-Warnings",
              "Deprecation",
              "Sunset",
              "Link",
            ),
            ...errors(402, 404, 409, 502),
          },
        },
      },
    )
    .post(
      "/v1/responses/:request_id/feedback",
      async ({ request, params, body, set }) => {
        const user = await deps.auth.jwtUser(request);
        const rid = requestIdFromPath(params.request_id);
        if (!rid)
          throw new GatewayError(
            "invalid_request",
            text(
              "request_id는 UUID 또는 resp_<32자리 16진수> 형식이어야 합니다.",
              "request_id must be a UUID or resp_<32 hex digits>.",
            ),
          );
        const b = body as FeedbackBody;
        const rating = {
          userId: user.id,
          rating: ratingValue(b.rating),
          comment: b.comment ?? null,
          category: b.category ?? null,
        };
        // A call its client named (X-Request-Id) is recorded under its account-scoped id (http/request-id.ts).
        const row =
          (await route.feedback.upsert({ ...rating, requestId: accountRequestId(user.id, rid) })) ??
          (await route.feedback.upsert({ ...rating, requestId: rid }));
        if (!row) throw notFound("요청");
        set.status = 201;
        return feedbackJson(rid, row);
      },
      {
        body: FeedbackBodySchema,
        detail: {
          security: AUTH.dashboard,
          tags: ["responses"],
          summary: "Rate a request you made (dashboard JWT); a second rating replaces the first",
          responses: created(Feedback),
        },
      },
    );
}
