/**
 * The client's own Responses body, as it may go to an upstream that speaks the Responses API
 * (core/chat/responses-native.ts): the gateway's own fields removed (`provider`, `trace_id`,
 * `plugins`, `reasoning_mode` / `reasoning.mode`; `stream` is the adapter's to set, and left
 * out so a streamed and a plain call share a cache key; `reasoning_effort` becomes
 * `reasoning.effort`), everything else as the client sent it (reasoning items and their
 * `encrypted_content`, `include`, `text.verbosity`, built-in tools…). None when the gateway
 * itself must rewrite the conversation: a `previous_response_id` it resolves from its own
 * store, an answer it keeps (RESPONSES_STORE), or the web plugin.
 */
import type { NativeResponses } from "../../core/model/types";
import type { ResponsesBody } from "./schema";

export function nativeResponses(body: ResponsesBody, gatewayKeeps: boolean): NativeResponses | undefined {
  if (gatewayKeeps || body.previous_response_id != null || body.plugins?.length) return undefined;
  const {
    provider: _p,
    trace_id: _t,
    plugins: _g,
    reasoning_mode: _m,
    reasoning_effort: effort,
    stream: _s,
    ...own
  } = body as ResponsesBody & Record<string, unknown>;
  const out: Record<string, unknown> = { ...own };
  if (body.reasoning || effort) {
    const { mode: _x, ...reasoning } = (body.reasoning ?? {}) as Record<string, unknown>;
    out.reasoning = effort && reasoning.effort === undefined ? { ...reasoning, effort } : reasoning;
  }
  return { body: out };
}
