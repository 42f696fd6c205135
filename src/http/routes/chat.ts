/** POST /v1/chat/completions: parse, authorize, delegate to the chat service, encode. */
import { Elysia } from "elysia";
import { parseWebPlugin } from "../../core/chat/web-search";
import type { ChatService } from "../../core/chat/service";
import type { PiiPort } from "../../core/chat/ports";
import { ChatBodySchema, type ChatBody } from "../../surfaces/openai/chat-schema";
import { toCoreChatRequest } from "../../surfaces/openai/chat-to-core";
import { completionId, toChatCompletion } from "../../surfaces/openai/chat-from-core";
import { cachedEventStream, chatEventStream } from "../../surfaces/openai/chat-stream";
import { callWarnings } from "../../core/chat/warnings";
import { warningHeaders } from "../warnings";
import { rateHeaders } from "../auth";
import { callIdentity, requestId } from "../request-id";
import { requestRecord } from "../request-log";
import { requestLang } from "../lang";
import type { AppDeps } from "../deps";
import { AUTH } from "../security";
import { errors, okOrStream, withHeaders } from "../openapi/describe";
import { ChatCompletion } from "../openapi/shapes";

export const SSE_HEADERS = { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache, no-store", connection: "keep-alive", "x-accel-buffering": "no" };

/** The calling app, named by the headers OpenAI-compatible clients already send. */
export function appName(request: Request): string | null {
  const title = request.headers.get("x-title")?.trim();
  if (title) return title.slice(0, 100);
  const ref = request.headers.get("http-referer") ?? request.headers.get("referer");
  if (!ref) return null;
  try {
    return new URL(ref).host.slice(0, 100) || null;
  } catch {
    return ref.slice(0, 100);
  }
}

export interface ChatRouteDeps {
  chat: ChatService;
  pii?: PiiPort;
  keepaliveMs: number;
}

export function chatRoutes(d: AppDeps, c: ChatRouteDeps) {
  return new Elysia({ name: "chat", normalize: false }).post(
    "/v1/chat/completions",
    async ({ request, server, body, set }) => {
      const { principal, rate } = await d.auth.apiKey(request, server, "model");
      const headers: Record<string, string> = rate ? rateHeaders(rate) : {};
      Object.assign(set.headers, headers);
      using slot = await d.calls.take(principal, request);
      const b = body as ChatBody;
      const web = parseWebPlugin(b.plugins);
      const id = requestId(request);
      const caller = { ...callIdentity(request, principal.user.id), principal, app: appName(request), signal: request.signal, trace: requestRecord(request), lang: requestLang(request), api: "chat" as const };
      const prepared = await c.chat.prepare(caller, {
        model: b.model,
        request: toCoreChatRequest(b),
        prefs: b.provider,
        traceId: b.trace_id,
        reasoningMode: b.reasoning_mode,
        web,
        stream: b.stream === true,
      });
      const meta = { id: completionId(id), created: Math.floor(Date.now() / 1000), keepaliveMs: c.keepaliveMs };
      const sseHeaders = { ...SSE_HEADERS, ...headers, "x-request-id": id };
      if (prepared.kind === "cached") {
        if (b.stream) return slot.untilEnd(new Response(cachedEventStream(prepared.outcome, meta), { headers: sseHeaders }));
        set.headers["x-cost-krw"] = "0";
        set.headers["x-cost-usd"] = "0";
        return toChatCompletion(prepared.outcome, id, meta.created);
      }
      if (!b.stream) {
        const outcome = await c.chat.complete(prepared.plan);
        const decision = c.chat.decisionOf(prepared.plan);
        if (decision) set.headers["x-policy-decision"] = decision;
        set.headers["x-cost-krw"] = String(outcome.cost.krw);
        set.headers["x-cost-usd"] = String(outcome.cost.usd);
        Object.assign(set.headers, warningHeaders(d.metrics, callWarnings(prepared.plan, outcome.provider)));
        return toChatCompletion(outcome, id, meta.created);
      }
      const opened = await c.chat.openStream(prepared.plan, "openai");
      const decision = c.chat.decisionOf(prepared.plan);
      const streamHeaders = { ...sseHeaders, ...(decision && { "x-policy-decision": decision }), ...warningHeaders(d.metrics, callWarnings(prepared.plan, opened.candidate.provider.id)) };
      return slot.untilEnd(new Response(chatEventStream(c.chat, prepared.plan, opened, meta, c.pii), { headers: streamHeaders }));
    },
    { body: ChatBodySchema, detail: { security: AUTH.apiKey, tags: ["chat"], summary: "Chat completion (OpenAI-compatible), optionally streamed", responses: { ...withHeaders(okOrStream(ChatCompletion, "`chat.completion.chunk` events, then `data: [DONE]`"), "X-Cost-KRW", "X-Cost-USD", "X-Policy-Decision", "X-Gateway-Warnings"), ...errors(402, 409, 502) } } },
  );
}
