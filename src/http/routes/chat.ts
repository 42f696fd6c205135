/** POST /v1/chat/completions: parse, authorize, run the call in the chat service, encode its answer. */
import { Elysia } from "elysia";
import { parseWebPlugin } from "../../core/chat/web-search";
import type { ChatService } from "../../core/chat/service";
import { ChatBodySchema, type ChatBody } from "../../surfaces/openai/chat-schema";
import { toCoreChatRequest } from "../../surfaces/openai/chat-to-core";
import { completionId, toChatCompletion } from "../../surfaces/openai/chat-from-core";
import { chatEventStream } from "../../surfaces/openai/chat-stream";
import { apiKeyAuth } from "../api-key-auth";
import { warningHeaders } from "../warnings";
import type { GatewayMetrics } from "../metrics";
import type { ChatRun } from "../../core/chat/call-stream";
import { requestId } from "../request-id";
import { callerOf } from "../caller";
import type { AppDeps } from "../deps";
import { AUTH } from "../security";
import { errors, okOrStream, withHeaders } from "../openapi/describe";
import { ChatCompletion } from "../../surfaces/openai/schemas";

export const SSE_HEADERS = {
  "content-type": "text/event-stream; charset=utf-8",
  "cache-control": "no-cache, no-store",
  connection: "keep-alive",
  "x-accel-buffering": "no",
};

/** A stream's response headers: SSE, the rate limits, the request id and the call's own (runHeaders). */
export function streamHeaders(
  headers: Record<string, string>,
  id: string,
  own: Record<string, string>,
): Record<string, string> {
  return { ...SSE_HEADERS, ...headers, "x-request-id": id, ...own };
}

/**
 * A chat call's own headers: a routing policy's decision, the settings its provider could not
 * take, and the answering model's deprecation. Read-only: usually one shared empty set.
 */
export function runHeaders(metrics: GatewayMetrics, run: ChatRun): Readonly<Record<string, string>> {
  const warned = warningHeaders(metrics, run.warnings, run.lifecycle ?? null);
  return run.decision ? { "x-policy-decision": run.decision, ...warned } : warned;
}

export interface ChatRouteDeps {
  chat: ChatService;
  keepaliveMs: number;
}

export function chatRoutes(deps: AppDeps, route: ChatRouteDeps) {
  return new Elysia({ name: "chat", normalize: false }).use(apiKeyAuth(deps.auth)).post(
    "/v1/chat/completions",
    async ({ request, body, set, principal, rateLimitHeaders: headers }) => {
      using slot = await deps.calls.take(principal, request);
      const b = body as ChatBody;
      const web = parseWebPlugin(b.plugins);
      const id = requestId(request);
      const caller = callerOf(request, principal, "chat");
      const run = await route.chat.run(caller, {
        model: b.model,
        request: toCoreChatRequest(b),
        prefs: b.provider,
        traceId: b.trace_id,
        reasoningMode: b.reasoning_mode,
        web,
        stream: b.stream === true,
        relay: "openai",
      });
      const meta = { id: completionId(id), created: Math.floor(Date.now() / 1000), keepaliveMs: route.keepaliveMs };
      const own = runHeaders(deps.metrics, run);
      if (run.kind === "json") {
        Object.assign(set.headers, own);
        set.headers["x-cost-krw"] = String(run.outcome.cost.krw);
        set.headers["x-cost-usd"] = String(run.outcome.cost.usd);
        return toChatCompletion(run.outcome, id, meta.created);
      }
      return slot.untilEnd(
        new Response(chatEventStream(run.stream, meta), { headers: streamHeaders(headers, id, own) }),
      );
    },
    {
      apiKey: "model",
      body: ChatBodySchema,
      detail: {
        security: AUTH.apiKey,
        tags: ["chat"],
        summary: "Chat completion (OpenAI-compatible), optionally streamed",
        responses: {
          ...withHeaders(
            okOrStream(ChatCompletion, "`chat.completion.chunk` events, then `data: [DONE]`"),
            "X-Cost-KRW",
            "X-Cost-USD",
            "X-Policy-Decision",
            "X-Gateway-Warnings",
            "Deprecation",
            "Sunset",
            "Link",
          ),
          ...errors(402, 409, 502),
        },
      },
    },
  );
}
