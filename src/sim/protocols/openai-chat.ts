/**
 * OpenAI Chat Completions (`POST /v1/chat/completions`), JSON and SSE, as OpenAI sends
 * them: the stream's first chunk carries `role` with empty content, content chunks follow,
 * then a finish chunk with an empty delta, the usage chunk (`choices: []`) only when
 * `stream_options.include_usage` is set (every earlier chunk then has `usage: null`), and
 * `data: [DONE]`. Also served as DeepSeek, Together and Groq.
 */
import { chooseTool, jsonInstruction, turnAfterAssistant, type OfferedTool, type ToolMode } from "../agent-turn.ts";
import { obeyDirectives } from "../directive-effects.ts";
import { parseDirectives } from "../directives.ts";
import { readJsonBody, unixSeconds } from "../http.ts";
import { automaticCachedTokens } from "../prompt-cache.ts";
import { planReply, splitArgs, type ReplyPlan } from "../reply-plan.ts";
import type { SimContext } from "../routes.ts";
import { sseResponse, type SseFrame } from "../sse.ts";
import { countJsonTokens, countTokens, NON_TEXT_PART_TOKENS, THINKING_TOKENS_BY_EFFORT } from "../tokens.ts";
import { openAIError } from "./openai-errors.ts";

interface OpenAIMessage {
  role?: string;
  content?: unknown;
  tool_call_id?: string;
  tool_calls?: { function?: { name?: string; arguments?: string } }[];
}

interface OpenAITool {
  type?: string;
  function?: { name?: string; parameters?: unknown };
}

interface OpenAIChatRequest {
  model?: unknown;
  messages?: unknown;
  stream?: boolean;
  stream_options?: { include_usage?: boolean } | null;
  max_tokens?: number | null;
  max_completion_tokens?: number | null;
  tools?: OpenAITool[];
  tool_choice?: unknown;
  reasoning_effort?: string;
  response_format?: { type?: string; json_schema?: { schema?: unknown } } | null;
}

export async function handleOpenAIChat(ctx: SimContext): Promise<Response> {
  const { raw, body } = await readJsonBody<OpenAIChatRequest>(ctx);
  if (typeof body.model !== "string" || body.model === "") {
    return openAIError(400, "you must provide a model parameter", { param: "model" });
  }
  if (!Array.isArray(body.messages) || body.messages.length === 0) {
    return openAIError(400, "[] is too short - 'messages'", { param: "messages", code: "invalid_value" });
  }
  const messages = body.messages as OpenAIMessage[];
  const model = body.model;
  const lastUserText = lastOpenAIUserText(messages);
  const turn = openAITurn(messages);
  const directives = parseDirectives(lastUserText);
  const early = await obeyDirectives(ctx, directives, raw);
  if (early) return early;

  const messageTokens = messages.map(openAIMessageTokens);
  let promptTokens = 0;
  for (const t of messageTokens) promptTokens += t;
  if (Array.isArray(body.tools)) for (const tool of body.tools) promptTokens += countJsonTokens(tool);
  const format = openAIJsonFormat(body.response_format);
  if (format) promptTokens += countJsonTokens(body.response_format);
  const json = format ?? jsonInstruction(openAISystemText(messages));
  const cachedTokens = automaticCachedTokens(ctx.sim, ctx.provider, model, messages, messageTokens);

  const plan = planReply({
    provider: ctx.provider,
    model,
    lastUserText,
    directives,
    maxTokens: body.max_completion_tokens ?? body.max_tokens ?? undefined,
    thinkingTokens: THINKING_TOKENS_BY_EFFORT[body.reasoning_effort ?? "none"] ?? 0,
    tool: chooseTool({
      tools: openAITools(body),
      mode: openAIToolMode(body.tool_choice),
      endsWithUser: turn.endsWithUser,
      userText: lastUserText,
      directives,
    }),
    toolResultText: turn.toolResultText,
    json,
  });
  const usage = openAIUsage(ctx.provider, promptTokens, cachedTokens, plan);
  const id = `chatcmpl-SIM${ctx.sim.nextId()}`;
  const callId = `call_SIM${ctx.sim.nextId()}`;
  const finish = plan.tool ? "tool_calls" : plan.truncated ? "length" : "stop";

  if (body.stream === true) {
    const frames = openAIStreamFrames(
      id,
      model,
      plan,
      finish,
      callId,
      usage,
      body.stream_options?.include_usage === true,
    );
    return sseResponse(ctx, frames, directives, { "content-type": "text/event-stream; charset=utf-8" });
  }
  const message = plan.tool
    ? {
        role: "assistant",
        content: null,
        tool_calls: [
          { id: callId, type: "function", function: { name: plan.tool.name, arguments: plan.tool.argsJson } },
        ],
        refusal: null,
        annotations: [],
      }
    : { role: "assistant", content: plan.text, refusal: null, annotations: [] };
  return Response.json({
    id,
    object: "chat.completion",
    created: unixSeconds(),
    model,
    choices: [{ index: 0, message, logprobs: null, finish_reason: finish }],
    usage,
    service_tier: "default",
    system_fingerprint: null,
  });
}

function openAIStreamFrames(
  id: string,
  model: string,
  plan: ReplyPlan,
  finish: string,
  callId: string,
  usage: object,
  includeUsage: boolean,
): SseFrame[] {
  // Every chunk shares this prefix; building it once keeps the per-chunk work to one
  // small JSON.stringify of the delta.
  const head = `data: {"id":${JSON.stringify(id)},"object":"chat.completion.chunk","created":${unixSeconds()},"model":${JSON.stringify(model)},"service_tier":"default","system_fingerprint":null,"choices":[`;
  const tail = includeUsage ? `],"usage":null}\n\n` : `]}\n\n`;
  const chunk = (delta: object, finishReason: string | null, content: boolean): SseFrame => ({
    text: `${head}{"index":0,"delta":${JSON.stringify(delta)},"logprobs":null,"finish_reason":${finishReason === null ? "null" : JSON.stringify(finishReason)}}${tail}`,
    content,
  });

  const frames: SseFrame[] = [];
  if (plan.tool) {
    frames.push(
      chunk(
        {
          role: "assistant",
          content: null,
          tool_calls: [{ index: 0, id: callId, type: "function", function: { name: plan.tool.name, arguments: "" } }],
        },
        null,
        false,
      ),
    );
    for (const piece of splitArgs(plan.tool.argsJson)) {
      frames.push(chunk({ tool_calls: [{ index: 0, function: { arguments: piece } }] }, null, true));
    }
  } else {
    frames.push(chunk({ role: "assistant", content: "", refusal: null }, null, false));
    for (const piece of plan.pieces) frames.push(chunk({ content: piece }, null, true));
  }
  frames.push(chunk({}, finish, false));
  if (includeUsage) frames.push({ text: `${head}],"usage":${JSON.stringify(usage)}}\n\n`, content: false });
  frames.push({ text: "data: [DONE]\n\n", content: false });
  return frames;
}

function openAIUsage(provider: string, promptTokens: number, cachedTokens: number, plan: ReplyPlan): object {
  const usage: Record<string, unknown> = {
    prompt_tokens: promptTokens,
    completion_tokens: plan.completionTokens,
    total_tokens: promptTokens + plan.completionTokens,
    prompt_tokens_details: { cached_tokens: cachedTokens, audio_tokens: 0 },
    completion_tokens_details: {
      reasoning_tokens: plan.thinkingTokens,
      audio_tokens: 0,
      accepted_prediction_tokens: 0,
      rejected_prediction_tokens: 0,
    },
  };
  if (provider === "deepseek") {
    // DeepSeek reports its context cache in these two extra fields as well.
    usage.prompt_cache_hit_tokens = cachedTokens;
    usage.prompt_cache_miss_tokens = promptTokens - cachedTokens;
  }
  return usage;
}

/** The function tools offered, by name. */
function openAITools(body: OpenAIChatRequest): OfferedTool[] {
  if (!Array.isArray(body.tools)) return [];
  return body.tools
    .filter((t) => typeof t?.function?.name === "string")
    .map((t) => ({ name: t.function!.name!, parameters: t.function!.parameters }));
}

/** `none`; `required` (first tool) or `{type: "function", function: {name}}`; else auto. */
function openAIToolMode(choice: unknown): ToolMode {
  if (choice === "none") return { kind: "none" };
  if (choice === "required") return { kind: "forced" };
  if (typeof choice === "object" && choice !== null) {
    const name = (choice as { function?: { name?: string } }).function?.name;
    return { kind: "forced", name: name ?? "" };
  }
  return { kind: "auto" };
}

/** The user messages and tool results after the last assistant message (agent-turn.ts). */
function openAITurn(messages: readonly OpenAIMessage[]): ReturnType<typeof turnAfterAssistant> {
  const since = messages.slice(messages.findLastIndex((m) => m?.role === "assistant") + 1);
  const users = since.filter((m) => m?.role === "user");
  const results = since.filter((m) => m?.role === "tool" || m?.role === "function");
  return turnAfterAssistant(users.map(contentText), results.map(contentText), users.length);
}

/** The system and developer messages' texts: where a JSON-only instruction would be. */
function openAISystemText(messages: readonly OpenAIMessage[]): string {
  return messages
    .filter((m) => m?.role === "system" || m?.role === "developer")
    .map(contentText)
    .join("\n");
}

/** A message's string content or its text parts joined by newlines. */
function contentText(m: OpenAIMessage): string {
  if (typeof m.content === "string") return m.content;
  if (!Array.isArray(m.content)) return "";
  return m.content
    .map((p: { text?: unknown }) => (typeof p?.text === "string" ? p.text : ""))
    .filter(Boolean)
    .join("\n");
}

/** `response_format` `json_object` (no schema) or `json_schema` (its `schema`). */
function openAIJsonFormat(format: OpenAIChatRequest["response_format"]): { schema?: unknown } | undefined {
  if (format?.type === "json_object") return {};
  if (format?.type === "json_schema") return { schema: format.json_schema?.schema ?? { type: "object" } };
  return undefined;
}

/** Text of the last `user` message: its string content or its text parts joined. */
function lastOpenAIUserText(messages: readonly OpenAIMessage[]): string {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i];
    if (m?.role === "user") return contentText(m);
  }
  return "";
}

/** A message's prompt tokens: its texts, non-text parts at a flat rate, its tool calls. */
function openAIMessageTokens(m: OpenAIMessage): number {
  let tokens = 0;
  if (typeof m?.content === "string") tokens += countTokens(m.content);
  else if (Array.isArray(m?.content)) {
    for (const part of m.content as { text?: unknown; refusal?: unknown }[]) {
      if (typeof part?.text === "string") tokens += countTokens(part.text);
      else if (typeof part?.refusal === "string") tokens += countTokens(part.refusal);
      else tokens += NON_TEXT_PART_TOKENS;
    }
  }
  if (Array.isArray(m?.tool_calls)) {
    for (const call of m.tool_calls) {
      tokens += countTokens(call?.function?.name ?? "") + countTokens(call?.function?.arguments ?? "");
    }
  }
  return tokens;
}
