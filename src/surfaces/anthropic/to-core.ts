/**
 * Anthropic Messages request → the core's chat request, so the call goes through the same chat
 * service (routing, billing, cache, masking, errors) as `/v1/chat/completions`.
 *
 * - `system` (string or text blocks) → a leading system message; `cache_control` kept on blocks.
 * - A `system` message inside `messages` (Anthropic's mid-conversation system message) → a
 *   system message at its position (its text blocks); one with `clear_at: "next_user_message"`
 *   is left out once a later user turn exists, as Anthropic stops showing it then. A
 *   `tool_addition` that defines a custom tool adds it to the tools (a reference names a tool
 *   already offered: translation offers every tool, deferred ones too, from the start);
 *   `tool_removal` has no equivalent (unmapped.ts reports it). A `tool_reference` in a tool
 *   result becomes a line of text naming the tool.
 * - A user turn's `tool_result` blocks → `tool` messages (first, in order), its other blocks →
 *   one user message; an assistant turn's text → content, its `tool_use` blocks → tool calls;
 *   an assistant turn's other blocks (`thinking`, `redacted_thinking`, server tool calls and
 *   their results) are dropped: Anthropic's own output, opaque to other providers.
 * - Images: base64 → a data URL, `url` → the URL. Other user block types are 422 at their `loc`.
 * - Custom tools → function tools; server tools (`type` set) are dropped; `tool_choice`
 *   auto/any/tool/none → auto/required/{function}/none, `disable_parallel_tool_use` →
 *   `parallel_tool_calls: false`.
 * - `thinking` → `reasoning_effort`: `enabled` by budget (the inverse of the Anthropic adapter's
 *   table), `disabled` → `none`, `adaptive` / `between_tools` → the effort asked for, else
 *   `medium`; without `thinking`, the effort asked for. The effort asked for is
 *   `output_config.effort`, or the `output_config.effort` of a system message of the current
 *   turn (after the last assistant turn: Anthropic applies it to that turn).
 * - `output_config.format` (a JSON schema) → `response_format` `json_schema`.
 * - `metadata.user_id` → OpenAI's `user` (OpenAI-compatible upstreams only); `top_k` and every
 *   other field reach Anthropic upstreams only, in the client's own body, which rides along as
 *   `anthropic`; what the translation cannot say is listed in `unmapped` (unmapped.ts).
 */
import { FIELD_REQUIRED, invalid, text } from "../../core/errors";
import { ANTHROPIC_THINKING_BUDGETS } from "../../core/model/thinking";
import type {
  ChatMessage,
  ChatRequest,
  ContentPart,
  FunctionTool,
  ReasoningEffort,
  ToolCall,
  ToolChoice,
} from "../../core/model/types";
import {
  EFFORTS,
  GATEWAY_FIELDS,
  type CountTokensBody,
  type MessageParam,
  type MessagesBody,
  type RawBlock,
} from "./schema";
import { unmappedSettings } from "./unmapped";

type Loc = (string | number)[];

export function toCoreFromMessages(body: MessagesBody, beta: string | null): Omit<ChatRequest, "model"> {
  const budget = body.thinking?.type === "enabled" ? body.thinking.budget_tokens : undefined;
  if (budget !== undefined && budget >= body.max_tokens)
    throw invalid(
      ["body", "thinking", "budget_tokens"],
      text("budget_tokens는 max_tokens보다 작아야 합니다.", "budget_tokens must be less than max_tokens"),
      "value_error",
    );
  const request: Omit<ChatRequest, "model"> = { ...promptOf(body), max_tokens: body.max_tokens };
  if (body.temperature !== undefined) request.temperature = body.temperature;
  if (body.top_p !== undefined) request.top_p = body.top_p;
  if (body.stop_sequences?.length) request.stop = body.stop_sequences;
  const user = body.metadata?.user_id;
  if (user) request.passthrough = { user };
  const format = body.output_config?.format;
  if (format) request.response_format = { type: "json_schema", json_schema: { name: "output", schema: format.schema } };
  const unmapped = unmappedSettings(body, beta);
  if (unmapped.length) request.unmapped = unmapped;
  // `stream` is the adapter's to set: a streamed and a plain call share response-cache entries.
  const native: Record<string, unknown> = { ...body };
  for (const f of [...GATEWAY_FIELDS, "stream"]) delete native[f];
  request.anthropic = beta ? { body: native, beta } : { body: native };
  return request;
}

/** count_tokens → the core request it counts: the prompt, and the client's body for an Anthropic upstream. */
export function toCoreCountTokens(body: CountTokensBody, beta: string | null): Omit<ChatRequest, "model"> {
  const native: Record<string, unknown> = { ...body };
  for (const f of GATEWAY_FIELDS) delete native[f];
  return { ...promptOf(body), max_tokens: 1, anthropic: beta ? { body: native, beta } : { body: native } };
}

/** The prompt part of a request (messages, tools, tool choice, reasoning): shared with count_tokens. */
export function promptOf(
  body: CountTokensBody,
): Pick<ChatRequest, "messages" | "tools" | "tool_choice" | "parallel_tool_calls" | "reasoning_effort"> {
  const messages: ChatMessage[] = [];
  if (body.system !== undefined) {
    const system = systemContent(body.system, ["body", "system"]);
    if (system) messages.push({ role: "system", content: system });
  }
  body.messages.forEach((m, i) => {
    const loc = ["body", "messages", i];
    if (m.role === "system") addSystemMessage(messages, m, loc, cleared(body.messages, i));
    else addTurn(messages, m, loc);
  });
  if (!messages.some((m) => m.role !== "system"))
    throw invalid(
      ["body", "messages"],
      text("messages에 답할 내용이 없습니다.", "messages have nothing to answer"),
      "value_error",
    );
  const out: ReturnType<typeof promptOf> = { messages };
  const tools = functionTools([...(body.tools ?? []), ...addedTools(body.messages)]);
  if (tools.length) {
    out.tools = tools;
    const c = body.tool_choice;
    if (c) {
      out.tool_choice = toolChoice(c, tools);
      if (c.disable_parallel_tool_use) out.parallel_tool_calls = false;
    }
  }
  const effort = effortOf(body);
  if (effort) out.reasoning_effort = effort;
  return out;
}

function systemContent(system: string | RawBlock[], loc: Loc): string | ContentPart[] | null {
  if (typeof system === "string") return system || null;
  const parts = system.map((b, i) => {
    if (b.type !== "text") throw unsupported(b.type, [...loc, i, "type"]);
    return textPart(b, [...loc, i]);
  });
  return joinIfPlain(parts);
}

/** A system message inside `messages`: its text, at its position (nothing when it has none or is cleared). */
function addSystemMessage(out: ChatMessage[], m: MessageParam, loc: Loc, isCleared: boolean): void {
  if (m.content === undefined || isCleared) return;
  if (typeof m.content === "string") {
    if (m.content) out.push({ role: "system", content: m.content });
    return;
  }
  const parts: ContentPart[] = [];
  (m.content as RawBlock[]).forEach((b, i) => {
    if (b.type === "text") parts.push(textPart(b, [...loc, "content", i]));
  });
  const content = joinIfPlain(parts);
  if (content) out.push({ role: "system", content });
}

/** A system message with `clear_at: "next_user_message"` followed by a user turn: no longer shown. */
function cleared(messages: MessageParam[], i: number): boolean {
  const m = messages[i] as MessageParam & { clear_at?: unknown };
  return m.clear_at === "next_user_message" && messages.slice(i + 1).some((n) => n.role === "user");
}

function addTurn(out: ChatMessage[], m: MessageParam, loc: Loc): void {
  if (m.content === undefined) throw invalid([...loc, "content"], FIELD_REQUIRED, "missing");
  if (typeof m.content === "string") {
    out.push({ role: m.role as "user" | "assistant", content: m.content });
    return;
  }
  const blocks = m.content as RawBlock[];
  if (m.role === "assistant") {
    const parts: ContentPart[] = [];
    const calls: ToolCall[] = [];
    blocks.forEach((b, i) => {
      const at = [...loc, "content", i];
      if (b.type === "text") parts.push(textPart(b, at));
      else if (b.type === "tool_use") calls.push(toolCall(b, at));
    });
    const msg: ChatMessage = {
      role: "assistant",
      content: parts.length ? parts.map((p) => (p as { text: string }).text).join("") : calls.length ? null : "",
    };
    if (calls.length) msg.tool_calls = calls;
    out.push(msg);
    return;
  }
  const parts: ContentPart[] = [];
  blocks.forEach((b, i) => {
    const at = [...loc, "content", i];
    if (b.type === "tool_result") out.push(toolResult(b, at));
    else parts.push(userPart(b, at));
  });
  if (parts.length) out.push({ role: "user", content: joinIfPlain(parts) ?? "" });
}

function userPart(b: RawBlock, loc: Loc): ContentPart {
  if (b.type === "text") return textPart(b, loc);
  if (b.type === "image") return imagePart(b, loc);
  throw unsupported(b.type, [...loc, "type"]);
}

/**
 * A tool result's block: a `tool_reference` (a tool search's answer, which loads a deferred
 * tool on Anthropic) says so in text — a translated model is offered every tool from the start.
 */
function resultPart(b: RawBlock, loc: Loc): ContentPart {
  if (b.type !== "tool_reference") return userPart(b, loc);
  if (typeof b.tool_name !== "string" || !b.tool_name) throw invalid([...loc, "tool_name"], FIELD_REQUIRED, "missing");
  return { type: "text", text: `Tool '${b.tool_name}' is available.` };
}

/** Custom tools that system messages' `tool_addition` blocks define (first definition of a name wins). */
function addedTools(messages: MessageParam[]): NonNullable<CountTokensBody["tools"]> {
  const out: NonNullable<CountTokensBody["tools"]> = [];
  for (const m of messages) {
    if (m.role !== "system" || !Array.isArray(m.content)) continue;
    for (const b of m.content as RawBlock[]) {
      const tool = b.tool as { type?: unknown; definition?: unknown } | undefined;
      const def = tool?.definition as NonNullable<CountTokensBody["tools"]>[number] | undefined;
      if (b.type === "tool_addition" && tool?.type === "tool_definition" && typeof def?.name === "string")
        out.push(def);
    }
  }
  return out;
}

function textPart(b: RawBlock, loc: Loc): ContentPart {
  if (typeof b.text !== "string") throw invalid([...loc, "text"], FIELD_REQUIRED, "missing");
  const part: ContentPart = { type: "text", text: b.text };
  const cc = cacheControl(b);
  if (cc) part.cache_control = cc;
  return part;
}

function imagePart(b: RawBlock, loc: Loc): ContentPart {
  const s = b.source as Record<string, unknown> | undefined;
  let url: string | null = null;
  if (s?.type === "base64" && typeof s.media_type === "string" && typeof s.data === "string")
    url = `data:${s.media_type};base64,${s.data}`;
  else if (s?.type === "url" && typeof s.url === "string" && s.url) url = s.url;
  if (!url)
    throw invalid(
      [...loc, "source"],
      text(
        "이미지 source는 {type: base64, media_type, data} 또는 {type: url, url}이어야 합니다.",
        "An image source must be {type: base64, media_type, data} or {type: url, url}.",
      ),
      "value_error",
    );
  const part: ContentPart = { type: "image_url", image_url: { url } };
  const cc = cacheControl(b);
  if (cc) part.cache_control = cc;
  return part;
}

function toolCall(b: RawBlock, loc: Loc): ToolCall {
  if (typeof b.id !== "string" || !b.id) throw invalid([...loc, "id"], FIELD_REQUIRED, "missing");
  if (typeof b.name !== "string" || !b.name) throw invalid([...loc, "name"], FIELD_REQUIRED, "missing");
  return { id: b.id, type: "function", function: { name: b.name, arguments: JSON.stringify(b.input ?? {}) } };
}

/** A tool result; `is_error` has no field elsewhere, so the text says it. */
function toolResult(b: RawBlock, loc: Loc): ChatMessage {
  if (typeof b.tool_use_id !== "string" || !b.tool_use_id)
    throw invalid([...loc, "tool_use_id"], FIELD_REQUIRED, "missing");
  let content: string | ContentPart[];
  if (b.content === undefined || typeof b.content === "string") content = (b.content as string | undefined) ?? "";
  else if (Array.isArray(b.content))
    content = joinIfPlain((b.content as RawBlock[]).map((p, i) => resultPart(p, [...loc, "content", i]))) ?? "";
  else
    throw invalid(
      [...loc, "content"],
      text("content는 문자열이나 블록 목록이어야 합니다.", "content must be a string or a list of blocks"),
      "value_error",
    );
  if (b.is_error === true)
    content = typeof content === "string" ? `Error: ${content}` : [{ type: "text", text: "Error:" }, ...content];
  return { role: "tool", tool_call_id: b.tool_use_id, content };
}

/** Text parts without cache breakpoints become one string (what every provider takes). */
function joinIfPlain(parts: ContentPart[]): string | ContentPart[] | null {
  if (!parts.length) return null;
  if (parts.every((p) => p.type === "text" && !p.cache_control))
    return parts.map((p) => (p as { text: string }).text).join("\n");
  return parts;
}

function cacheControl(b: RawBlock): ContentPart["cache_control"] {
  const cc = b.cache_control as { type?: unknown; ttl?: unknown } | undefined;
  if (!cc || cc.type !== "ephemeral") return undefined;
  return typeof cc.ttl === "string" ? { type: "ephemeral", ttl: cc.ttl } : { type: "ephemeral" };
}

function unsupported(type: string, loc: Loc) {
  return invalid(
    loc,
    text(`지원하지 않는 콘텐츠 블록 type입니다: '${type}'`, `unsupported content block type '${type}'`),
    "value_error",
  );
}

function functionTools(tools: NonNullable<CountTokensBody["tools"]>): FunctionTool[] {
  const out: FunctionTool[] = [];
  const names = new Set<string>();
  for (const tool of tools) {
    if (tool.type !== undefined && tool.type !== "custom") continue; // a server tool: Anthropic's own
    if (names.has(tool.name)) continue;
    names.add(tool.name);
    const fn: FunctionTool["function"] = {
      name: tool.name,
      parameters: tool.input_schema ?? { type: "object", properties: {} },
    };
    if (tool.description) fn.description = tool.description;
    out.push({ type: "function", function: fn });
  }
  return out;
}

function toolChoice(c: NonNullable<CountTokensBody["tool_choice"]>, tools: FunctionTool[]): ToolChoice {
  if (c.type === "auto") return "auto";
  if (c.type === "none") return "none";
  if (c.type === "any") return "required";
  if (!c.name) throw invalid(["body", "tool_choice", "name"], FIELD_REQUIRED, "missing");
  if (!tools.some((t) => t.function.name === c.name))
    throw invalid(
      ["body", "tool_choice", "name"],
      text(`이름이 '${c.name}'인 도구가 없습니다.`, `no tool named '${c.name}'`),
      "value_error",
    );
  return { type: "function", function: { name: c.name } };
}

/**
 * The reasoning effort of a request: `enabled` thinking by its budget (the largest effort whose
 * budget in the Anthropic adapter's table it reaches), `disabled` none, `adaptive` /
 * `between_tools` the effort asked for (else medium), no `thinking` the effort asked for.
 */
function effortOf(body: CountTokensBody): ReasoningEffort | undefined {
  const thinking = body.thinking;
  const asked = turnEffort(body.messages) ?? body.output_config?.effort ?? undefined;
  if (!thinking) return asked;
  if (thinking.type === "disabled") return "none";
  if (thinking.type === "adaptive" || thinking.type === "between_tools") return asked ?? "medium";
  if (thinking.budget_tokens === undefined)
    throw invalid(["body", "thinking", "budget_tokens"], FIELD_REQUIRED, "missing");
  let effort: ReasoningEffort = "minimal";
  for (const [e, budget] of Object.entries(ANTHROPIC_THINKING_BUDGETS))
    if (thinking.budget_tokens >= budget) effort = e as ReasoningEffort;
  return effort;
}

/** The `output_config.effort` of the last system message after the last assistant turn, if any. */
function turnEffort(messages: MessageParam[]): ReasoningEffort | undefined {
  let effort: ReasoningEffort | undefined;
  for (const m of messages) {
    if (m.role === "assistant") effort = undefined;
    const own = (m as { output_config?: { effort?: unknown } }).output_config?.effort;
    if (m.role === "system" && typeof own === "string" && (EFFORTS as readonly string[]).includes(own))
      effort = own as ReasoningEffort;
  }
  return effort;
}
