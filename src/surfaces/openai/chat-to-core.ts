/** OpenAI chat request → the core's ChatRequest (model left for the router to fill). */
import type { ChatMessage, ChatRequest, ContentPart, ReasoningEffort } from "../../core/model/types";
import { invalid, text } from "../../core/errors";
import type { ChatBody } from "./chat-schema";

/** Fields the gateway consumes itself; everything else unknown is passed through. */
const OWN = new Set([
  "model",
  "messages",
  "temperature",
  "top_p",
  "max_tokens",
  "max_completion_tokens",
  "stop",
  "tools",
  "tool_choice",
  "response_format",
  "seed",
  "frequency_penalty",
  "presence_penalty",
  "parallel_tool_calls",
  "logit_bias",
  "reasoning_effort",
  "thinking",
  "service_tier",
  "stream",
  "stream_options",
  "n",
  "trace_id",
  "reasoning_mode",
  "plugins",
  "provider",
  "user",
  "metadata",
]);

export const DEFAULT_MAX_TOKENS = 4096;
export const DEFAULT_TEMPERATURE = 0.7;

export function toCoreMessages(messages: ChatBody["messages"]): ChatMessage[] {
  return messages.map((m) => {
    const role = m.role === "developer" ? "system" : m.role;
    const out: ChatMessage = { role, content: (m.content ?? null) as string | ContentPart[] | null };
    if (m.name !== undefined) out.name = m.name;
    if (m.tool_calls !== undefined) out.tool_calls = m.tool_calls;
    if (m.tool_call_id !== undefined) out.tool_call_id = m.tool_call_id;
    return out;
  });
}

/** `reasoning_effort` wins over the `thinking` alias (true = medium, false = none). */
export function effortOf(body: ChatBody): ReasoningEffort | undefined {
  if (body.reasoning_effort) return body.reasoning_effort;
  if (body.thinking === true) return "medium";
  if (body.thinking === false) return "none";
  return undefined;
}

export function toCoreChatRequest(body: ChatBody): Omit<ChatRequest, "model"> {
  const req: Omit<ChatRequest, "model"> = {
    messages: toCoreMessages(body.messages),
    max_tokens: body.max_tokens ?? body.max_completion_tokens ?? DEFAULT_MAX_TOKENS,
  };
  const b = body as Record<string, any>;
  // The specification's default temperature is 0.7, whatever the provider's own default is.
  req.temperature = b.temperature ?? DEFAULT_TEMPERATURE;
  if (b.top_p !== undefined) req.top_p = b.top_p;
  if (b.stop !== undefined && b.stop !== null) req.stop = b.stop;
  if (Array.isArray(b.tools) && b.tools.length) req.tools = b.tools;
  if (b.tool_choice !== undefined) req.tool_choice = b.tool_choice;
  if (b.response_format != null) {
    if (b.response_format.type === "json_schema" && !b.response_format.json_schema) {
      throw invalid(
        ["body", "response_format", "json_schema"],
        text(
          "필수 항목입니다: type이 json_schema이면 json_schema가 있어야 합니다.",
          "Field required: type json_schema needs json_schema",
        ),
        "missing",
      );
    }
    req.response_format = b.response_format;
  }
  if (b.seed !== undefined) req.seed = b.seed;
  if (b.frequency_penalty !== undefined) req.frequency_penalty = b.frequency_penalty;
  if (b.presence_penalty !== undefined) req.presence_penalty = b.presence_penalty;
  if (b.parallel_tool_calls !== undefined) req.parallel_tool_calls = b.parallel_tool_calls;
  if (b.logit_bias !== undefined) req.logit_bias = b.logit_bias;
  const effort = effortOf(body);
  if (effort) req.reasoning_effort = effort;
  if (b.service_tier !== undefined) req.service_tier = b.service_tier;
  // Made at the first unknown field: most bodies have none (no key arrays, no empty object).
  let passthrough: Record<string, unknown> | undefined;
  for (const k in b) if (!OWN.has(k)) (passthrough ??= {})[k] = b[k];
  if (passthrough) req.passthrough = passthrough;
  return req;
}
