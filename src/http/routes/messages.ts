/**
 * POST /v1/messages (Anthropic's Messages API as an ingress dialect) and its count_tokens.
 * The call is converted into the same chat call as /v1/chat/completions, so routing, billing,
 * cache, masking and errors are the chat service's; only the wire format differs. An Anthropic
 * upstream gets the client's own body, and its stream (or answer) is relayed as it came.
 * Both routes declare Anthropic's error dialect: their errors are rendered in Anthropic's
 * envelope (../error-dialect.ts).
 */
import { Elysia } from "elysia";
import {
  CountTokensBodySchema,
  MessagesBodySchema,
  type CountTokensBody,
  type MessagesBody,
} from "../../surfaces/anthropic/schema";
import { toCoreCountTokens, toCoreFromMessages } from "../../surfaces/anthropic/to-core";
import { messageId, messageObject, tokenCountJson } from "../../surfaces/anthropic/from-core";
import { messagesEventStream } from "../../surfaces/anthropic/stream";
import { relayMessagesStream } from "../../surfaces/anthropic/relay";
import { apiKeyAuth } from "../api-key-auth";
import type { CountTokensGuard } from "../count-tokens-guard";
import type { AppDeps } from "../deps";
import { requestId } from "../request-id";
import { callerOf } from "../caller";
import { runHeaders, SSE_HEADERS, streamHeaders, type ChatRouteDeps } from "./chat";
import { AUTH } from "../security";
import { ANTHROPIC_ERRORS } from "../error-dialect";
import { ok, okOrStream, withHeaders } from "../openapi/describe";
import { AnthropicMessage, AnthropicTokenCount } from "../../surfaces/anthropic/schemas";
import { anthropicErrors } from "../openapi/anthropic-errors";

const ERRORS = anthropicErrors(400, 401, 402, 403, 409, 413, 422, 429, 502, 503);

export interface MessagesRouteDeps extends ChatRouteDeps {
  /** count_tokens: throttled, recorded, and upstream only for an account with credit. */
  count: CountTokensGuard;
}

export function messagesRoutes(deps: AppDeps, route: MessagesRouteDeps) {
  return new Elysia({ name: "messages", normalize: false })
    .use(apiKeyAuth(deps.auth))
    .post(
      "/v1/messages",
      async ({ request, body, set, principal, rateLimitHeaders }) => {
        const headers: Record<string, string> = { "cache-control": "no-store", ...rateLimitHeaders };
        Object.assign(set.headers, headers);
        using slot = await deps.calls.take(principal, request);
        const b = body as MessagesBody;
        const core = toCoreFromMessages(b, request.headers.get("anthropic-beta"));
        const id = requestId(request);
        const caller = callerOf(request, principal, "messages");
        const stream = b.stream === true;
        const run = await route.chat.run(caller, {
          model: b.model,
          request: core,
          prefs: b.provider,
          traceId: b.trace_id,
          stream,
          reasoningHint: true,
          relay: "anthropic",
        });
        const meta = { id: messageId(id), keepaliveMs: route.keepaliveMs };
        const own = runHeaders(deps.metrics, run);
        if (run.kind === "stream") {
          const out = run.stream.head.relayed
            ? relayMessagesStream(run.stream, route.keepaliveMs)
            : messagesEventStream(run.stream, meta);
          return slot.untilEnd(
            new Response(out, {
              headers: streamHeaders({ ...headers, "cache-control": SSE_HEADERS["cache-control"] }, id, own),
            }),
          );
        }
        const o = run.outcome;
        Object.assign(set.headers, own);
        set.headers["x-cost-krw"] = String(o.cost.krw);
        set.headers["x-cost-usd"] = String(o.cost.usd);
        // An Anthropic upstream's own answer, as it came (thinking blocks and all).
        return (
          o.result.vendorBody ??
          messageObject({ id: meta.id, model: o.model }, o.result, { provider: o.provider, cached: o.cached })
        );
      },
      {
        apiKey: "model",
        body: MessagesBodySchema,
        detail: {
          ...ANTHROPIC_ERRORS,
          security: AUTH.apiKeyOrXApiKey,
          tags: ["messages"],
          summary:
            "Anthropic Messages call (any model; converted into a chat call, relayed for Anthropic upstreams), optionally streamed",
          responses: {
            ...withHeaders(
              okOrStream(
                AnthropicMessage,
                "Anthropic's `message_start` … `message_stop` events; the last `message_delta`'s usage adds `cost_krw` and `cost_usd`",
              ),
              "X-Cost-KRW",
              "X-Cost-USD",
              "X-Policy-Decision",
              "X-Gateway-Warnings",
              "Deprecation",
              "Sunset",
              "Link",
            ),
            ...ERRORS,
          },
        },
      },
    )
    .post(
      "/v1/messages/count_tokens",
      async ({ request, body, set, principal }) => {
        set.headers["cache-control"] = "no-store";
        const b = body as CountTokensBody;
        const { upstream } = await route.count.admit(principal);
        const count = await route.chat.countInput(
          principal,
          b.model,
          toCoreCountTokens(b, request.headers.get("anthropic-beta")),
          request.signal,
          upstream,
        );
        route.count.record(principal, upstream, count.source, count.tokens);
        set.headers["x-token-count-source"] = count.source;
        return tokenCountJson(count.tokens);
      },
      {
        apiKey: "model",
        body: CountTokensBodySchema,
        detail: {
          ...ANTHROPIC_ERRORS,
          security: AUTH.apiKeyOrXApiKey,
          tags: ["messages"],
          summary:
            "Input tokens of a Messages request: Anthropic's own count for a model Anthropic answers first (for an account with credit), else the gateway's estimate (as its credit hold counts); never billed, throttled per key and account",
          responses: {
            ...withHeaders(ok(AnthropicTokenCount), "X-Token-Count-Source"),
            ...anthropicErrors(400, 401, 403, 413, 422, 429, 503),
          },
        },
      },
    );
}
