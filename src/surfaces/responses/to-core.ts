/**
 * Responses request → the core's chat request, so the call goes through the same chat
 * service (routing, billing, cache, masking, errors) as `/v1/chat/completions`.
 *
 * - `instructions` becomes a leading system message; `input` a user message (string) or the
 *   converted items: `message` → a message (`developer` → system), `function_call` → an
 *   assistant tool call (consecutive calls, and an assistant text just before them, merge into
 *   one assistant turn, as chat providers expect), `function_call_output` → a tool message.
 *   `reasoning` items are dropped (their content is opaque to other providers).
 * - Flat function tools are converted; every other tool type is dropped silently, and a
 *   `tool_choice` that names no remaining function is dropped with them.
 * - `max_output_tokens` (default 4096) → `max_tokens`; top-level `reasoning_effort` /
 *   `reasoning_mode` win over `reasoning.effort` / `reasoning.mode`.
 * - `text.format` `json_object` / `json_schema` → chat's `response_format` (the flat
 *   `{name, schema, strict, description}` nested under `json_schema`), so structured outputs
 *   take the same per-provider mapping as on chat.
 */
import { DEFAULT_TEMPERATURE } from "../openai/chat-to-core";
import { FIELD_REQUIRED, invalid, text } from "../../core/errors";
import type {
  ChatMessage,
  ChatRequest,
  ContentPart,
  FunctionTool,
  ReasoningEffort,
  ToolCall,
  ToolChoice,
} from "../../core/model/types";
import type { InputItem, ResponsesBody } from "./schema";

export const DEFAULT_MAX_OUTPUT_TOKENS = 4096;

export interface CoreCall {
  request: Omit<ChatRequest, "model">;
  reasoningMode?: "standard" | "pro";
}

type Loc = (string | number)[];
type RawPart = { type: string } & Record<string, unknown>;

/** `prior`: the items of earlier turns (a stored previous response's), before the input. */
export function toCoreFromResponses(body: ResponsesBody, prior: InputItem[] = []): CoreCall {
  const messages: ChatMessage[] = [];
  if (body.instructions) messages.push({ role: "system", content: body.instructions });
  prior.forEach((item, i) => addItem(messages, item, ["body", "previous_response_id", i]));
  if (typeof body.input === "string") messages.push({ role: "user", content: body.input });
  else body.input.forEach((item, i) => addItem(messages, item, ["body", "input", i]));
  if (!messages.some((m) => m.role !== "system"))
    throw invalid(
      ["body", "input"],
      text("input에 답할 메시지가 없습니다.", "input has no message to answer"),
      "value_error",
    );

  const request: Omit<ChatRequest, "model"> = {
    messages,
    max_tokens: body.max_output_tokens ?? DEFAULT_MAX_OUTPUT_TOKENS,
  };
  // Same default as chat (0.7): the Responses call is the same internal chat call.
  request.temperature = body.temperature ?? DEFAULT_TEMPERATURE;
  if (body.top_p != null) request.top_p = body.top_p;
  const tools = functionTools(body.tools ?? []);
  if (tools.length) {
    request.tools = tools;
    const choice = toolChoice(body.tool_choice, tools);
    if (choice !== undefined) request.tool_choice = choice;
  }
  if (body.parallel_tool_calls != null) request.parallel_tool_calls = body.parallel_tool_calls;
  const effort: ReasoningEffort | null | undefined = body.reasoning_effort ?? body.reasoning?.effort;
  if (effort) request.reasoning_effort = effort;
  if (body.service_tier != null) request.service_tier = body.service_tier;
  const format = responseFormat(body.text?.format);
  if (format) request.response_format = format;
  const mode = body.reasoning_mode ?? body.reasoning?.mode ?? undefined;
  return mode ? { request, reasoningMode: mode } : { request };
}

function responseFormat(format: NonNullable<ResponsesBody["text"]>["format"]): Record<string, unknown> | undefined {
  if (format?.type === "json_object") return { type: "json_object" };
  if (format?.type !== "json_schema") return undefined;
  if (!format.name) throw invalid(["body", "text", "format", "name"], FIELD_REQUIRED, "missing");
  if (!format.schema) throw invalid(["body", "text", "format", "schema"], FIELD_REQUIRED, "missing");
  const { type: _, ...spec } = format;
  return { type: "json_schema", json_schema: spec };
}

function addItem(out: ChatMessage[], item: InputItem, loc: Loc): void {
  const type = item.type ?? (item.role ? "message" : undefined);
  if (type === "reasoning") return;
  // Resolved before conversion (history.ts); one left here had nothing to resolve against.
  if (type === "item_reference")
    throw invalid([...loc, "id"], text("저장된 항목을 찾을 수 없습니다.", "No stored item to resolve"), "value_error");
  if (type === "message") {
    if (!item.role) throw invalid([...loc, "role"], FIELD_REQUIRED, "missing");
    const role = item.role === "developer" ? "system" : item.role;
    const content = messageContent(item.content ?? "", role, [...loc, "content"]);
    if (role === "assistant") {
      const prev = out[out.length - 1];
      // An assistant text right after assistant tool calls of the same turn joins them.
      if (prev?.role === "assistant" && prev.tool_calls?.length && !prev.content) {
        prev.content = content;
        return;
      }
    }
    out.push({ role, content });
    return;
  }
  if (type === "function_call") {
    if (!item.call_id) throw invalid([...loc, "call_id"], FIELD_REQUIRED, "missing");
    if (!item.name) throw invalid([...loc, "name"], FIELD_REQUIRED, "missing");
    const call: ToolCall = {
      id: item.call_id,
      type: "function",
      function: { name: item.name, arguments: item.arguments ?? "" },
    };
    const prev = out[out.length - 1];
    if (prev?.role === "assistant") (prev.tool_calls ??= []).push(call);
    else out.push({ role: "assistant", content: null, tool_calls: [call] });
    return;
  }
  if (type === "function_call_output") {
    if (!item.call_id) throw invalid([...loc, "call_id"], FIELD_REQUIRED, "missing");
    out.push({ role: "tool", tool_call_id: item.call_id, content: toolOutput(item.output, [...loc, "output"]) });
    return;
  }
  throw invalid(
    [...loc, "type"],
    text("필수 항목입니다: 항목에는 type이나 role이 있어야 합니다.", "Field required: an item needs a type or a role"),
    "missing",
  );
}

/** Parts → core parts; an assistant's text parts become one string (what every provider takes). */
function messageContent(
  content: string | RawPart[] | null,
  role: ChatMessage["role"],
  loc: Loc,
): string | ContentPart[] {
  if (typeof content === "string") return content;
  const parts = (content ?? []).map((p, i) => toPart(p, [...loc, i]));
  if (role === "assistant" || role === "system") {
    if (parts.every((p) => p.type === "text")) return parts.map((p) => (p as { text: string }).text).join("");
  }
  return parts;
}

function toPart(p: RawPart, loc: Loc): ContentPart {
  switch (p.type) {
    case "input_text":
    case "output_text":
    case "text":
    case "summary_text":
      if (typeof p.text !== "string") throw invalid([...loc, "text"], FIELD_REQUIRED, "missing");
      return { type: "text", text: p.text };
    case "refusal":
      return { type: "text", text: typeof p.refusal === "string" ? p.refusal : "" };
    case "input_image": {
      const url = typeof p.image_url === "string" ? p.image_url : null;
      if (!url)
        throw invalid(
          [...loc, "image_url"],
          text(
            "image_url(URL 또는 data URL)이 필요합니다. 파일 id는 지원하지 않습니다.",
            "image_url (a URL or data URL) is required; file ids are not supported",
          ),
          "value_error",
        );
      const part: ContentPart = { type: "image_url", image_url: { url } };
      if (typeof p.detail === "string") part.image_url.detail = p.detail;
      return part;
    }
    default:
      throw invalid(
        [...loc, "type"],
        text(`지원하지 않는 콘텐츠 파트 type입니다: '${p.type}'`, `unsupported content part type '${p.type}'`),
        "value_error",
      );
  }
}

/** A tool result: a string as is, text parts joined, other parts kept as content parts. */
function toolOutput(output: string | RawPart[] | undefined, loc: Loc): string | ContentPart[] {
  if (output === undefined) return "";
  if (typeof output === "string") return output;
  const parts = output.map((p, i) => toPart(p, [...loc, i]));
  return parts.every((p) => p.type === "text") ? parts.map((p) => (p as { text: string }).text).join("") : parts;
}

function functionTools(tools: NonNullable<ResponsesBody["tools"]>): FunctionTool[] {
  const out: FunctionTool[] = [];
  tools.forEach((tool, i) => {
    if (tool.type !== "function") return; // web search, file search, MCP, ...: dropped silently
    // The chat shape `{type, function: {...}}` is taken too, for clients that send it here.
    const nested = (
      tool as {
        function?: { name?: string; description?: string; parameters?: Record<string, unknown>; strict?: boolean };
      }
    ).function;
    const name = tool.name ?? nested?.name;
    if (!name) throw invalid(["body", "tools", i, "name"], FIELD_REQUIRED, "missing");
    const fn: FunctionTool["function"] = { name };
    const description = tool.description ?? nested?.description;
    const parameters = tool.parameters ?? nested?.parameters;
    const strict = tool.strict ?? nested?.strict;
    if (description) fn.description = description;
    if (parameters) fn.parameters = parameters;
    if (strict != null) fn.strict = strict;
    out.push({ type: "function", function: fn });
  });
  return out;
}

function toolChoice(choice: ResponsesBody["tool_choice"], tools: FunctionTool[]): ToolChoice | undefined {
  if (choice == null) return undefined;
  if (typeof choice === "string") return choice;
  if (choice.type !== "function") return undefined; // a hosted tool's choice: its tool was dropped
  if (!choice.name) throw invalid(["body", "tool_choice", "name"], FIELD_REQUIRED, "missing");
  if (!tools.some((t) => t.function.name === choice.name))
    throw invalid(
      ["body", "tool_choice", "name"],
      text(`이름이 '${choice.name}'인 function 도구가 없습니다.`, `no function tool named '${choice.name}'`),
      "value_error",
    );
  return { type: "function", function: { name: choice.name } };
}
