/**
 * OpenAI's Responses API (`POST /v1/responses`, provider `openai` only), JSON and SSE, as
 * OpenAI sends them: the output is a list of items (a `reasoning` item when the request
 * reasons or asks for `include: ["reasoning.encrypted_content"]`, then a `message` or a
 * `function_call`), `usage` has `input_tokens_details.cached_tokens` and
 * `output_tokens_details.reasoning_tokens`. The stream is `event:` + `data:` frames with
 * `type` and `sequence_number` (response.created, response.in_progress, output_item.added,
 * content_part.added, output_text.delta…, output_text.done, content_part.done /
 * function_call_arguments.delta…, .done, output_item.done, response.completed) and, like
 * OpenAI's, no `[DONE]`. Same rules as chat: directives, deterministic replies, the agent rule.
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

type Item = Record<string, any>;

interface ResponsesRequest {
  model?: unknown;
  input?: unknown;
  instructions?: unknown;
  stream?: boolean;
  max_output_tokens?: number | null;
  tools?: Item[];
  tool_choice?: unknown;
  reasoning?: { effort?: string | null; summary?: string | null } | null;
  include?: unknown;
  text?: { format?: { type?: string; schema?: unknown }; verbosity?: string } | null;
  store?: boolean;
  parallel_tool_calls?: boolean;
  previous_response_id?: string | null;
  temperature?: number | null;
  top_p?: number | null;
  metadata?: Record<string, unknown>;
}

export async function handleOpenAIResponses(ctx: SimContext): Promise<Response> {
  const { raw, body } = await readJsonBody<ResponsesRequest>(ctx);
  if (typeof body.model !== "string" || body.model === "") {
    return openAIError(400, "Missing required parameter: 'model'.", { param: "model" });
  }
  const items: Item[] =
    typeof body.input === "string"
      ? [{ type: "message", role: "user", content: body.input }]
      : Array.isArray(body.input)
        ? body.input
        : [];
  if (!items.length) return openAIError(400, "Missing required parameter: 'input'.", { param: "input" });
  const model = body.model;
  const turn = itemsTurn(items);
  const lastUserText = lastUserItemText(items);
  const directives = parseDirectives(lastUserText);
  const early = await obeyDirectives(ctx, directives, raw);
  if (early) return early;

  const instructions = typeof body.instructions === "string" ? body.instructions : "";
  const itemTokens = items.map(itemTokensOf);
  let inputTokens = countTokens(instructions);
  for (const t of itemTokens) inputTokens += t;
  if (Array.isArray(body.tools)) for (const tool of body.tools) inputTokens += countJsonTokens(tool);
  const format = body.text?.format;
  const json =
    format?.type === "json_schema"
      ? { schema: format.schema ?? { type: "object" } }
      : format?.type === "json_object"
        ? {}
        : jsonInstruction([instructions, systemText(items)].join("\n"));
  const cachedTokens = automaticCachedTokens(
    ctx.sim,
    ctx.provider,
    model,
    [instructions, ...items],
    [countTokens(instructions), ...itemTokens],
  );
  const effort = body.reasoning?.effort ?? "none";
  const plan = planReply({
    provider: ctx.provider,
    model,
    lastUserText,
    directives,
    maxTokens: body.max_output_tokens ?? undefined,
    thinkingTokens: THINKING_TOKENS_BY_EFFORT[effort] ?? 0,
    tool: chooseTool({
      tools: functionTools(body.tools),
      mode: toolMode(body.tool_choice),
      endsWithUser: turn.endsWithUser,
      userText: lastUserText,
      directives,
    }),
    toolResultText: turn.toolResultText,
    json,
  });
  const encrypted = Array.isArray(body.include) && body.include.includes("reasoning.encrypted_content");
  const n = ctx.sim.nextId();
  const ids = { resp: `resp_SIM${n}`, rs: `rs_SIM${n}`, msg: `msg_SIM${n}`, fc: `fc_SIM${n}`, call: `call_SIM${n}` };
  const reasoning: Item | null =
    plan.thinkingTokens > 0 || encrypted
      ? {
          id: ids.rs,
          type: "reasoning",
          summary: [],
          ...(encrypted && { encrypted_content: encryptedContent(model, n, plan.thinkingTokens) }),
        }
      : null;
  const final: Item = plan.tool
    ? {
        id: ids.fc,
        type: "function_call",
        status: "completed",
        arguments: plan.tool.argsJson,
        call_id: ids.call,
        name: plan.tool.name,
      }
    : {
        id: ids.msg,
        type: "message",
        status: "completed",
        content: [{ type: "output_text", annotations: [], logprobs: [], text: plan.text }],
        role: "assistant",
      };
  const usage = {
    input_tokens: inputTokens,
    input_tokens_details: { cached_tokens: cachedTokens },
    output_tokens: plan.completionTokens,
    output_tokens_details: { reasoning_tokens: plan.thinkingTokens },
    total_tokens: inputTokens + plan.completionTokens,
  };
  // OpenAI echoes the request's settings on the response object (SDK helpers read `text.format`).
  const head = {
    id: ids.resp,
    object: "response",
    created_at: unixSeconds(),
    background: false,
    error: null,
    model,
    instructions: body.instructions ?? null,
    max_output_tokens: body.max_output_tokens ?? null,
    parallel_tool_calls: body.parallel_tool_calls ?? true,
    previous_response_id: body.previous_response_id ?? null,
    reasoning: { effort: body.reasoning?.effort ?? null, summary: body.reasoning?.summary ?? null },
    service_tier: "default",
    store: body.store ?? true,
    temperature: body.temperature ?? 1,
    text: { format: { type: "text" }, verbosity: "medium", ...body.text },
    tool_choice: body.tool_choice ?? "auto",
    tools: body.tools ?? [],
    top_p: body.top_p ?? 1,
    truncation: "disabled",
    metadata: body.metadata ?? {},
  };
  const output = reasoning ? [reasoning, final] : [final];
  const completed = {
    ...head,
    status: plan.truncated ? "incomplete" : "completed",
    incomplete_details: plan.truncated ? { reason: "max_output_tokens" } : null,
    output,
    usage,
  };
  if (body.stream !== true) return Response.json(completed);
  const frames = streamFrames(head, completed, reasoning, final, plan);
  return sseResponse(ctx, frames, directives, { "content-type": "text/event-stream; charset=utf-8" });
}

/** The stream's frames, numbered; the text and arguments deltas are the `content` ones `[sim:drop]` counts. */
function streamFrames(head: Item, completed: Item, reasoning: Item | null, final: Item, plan: ReplyPlan): SseFrame[] {
  const frames: SseFrame[] = [];
  let seq = 0;
  const emit = (type: string, fields: Item, content = false) =>
    frames.push({
      text: `event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: seq++, ...fields })}\n\n`,
      content,
    });
  const inProgress = { ...head, status: "in_progress", incomplete_details: null, output: [], usage: null };
  emit("response.created", { response: inProgress });
  emit("response.in_progress", { response: inProgress });
  let index = 0;
  if (reasoning) {
    emit("response.output_item.added", { output_index: index, item: { ...reasoning, summary: [] } });
    emit("response.output_item.done", { output_index: index, item: reasoning });
    index++;
  }
  if (final.type === "function_call") {
    emit("response.output_item.added", {
      output_index: index,
      item: { ...final, status: "in_progress", arguments: "" },
    });
    for (const delta of splitArgs(final.arguments))
      emit("response.function_call_arguments.delta", { item_id: final.id, output_index: index, delta }, true);
    emit("response.function_call_arguments.done", {
      item_id: final.id,
      output_index: index,
      arguments: final.arguments,
    });
  } else {
    const base = { item_id: final.id, output_index: index, content_index: 0 };
    emit("response.output_item.added", { output_index: index, item: { ...final, status: "in_progress", content: [] } });
    emit("response.content_part.added", {
      ...base,
      part: { type: "output_text", annotations: [], logprobs: [], text: "" },
    });
    for (const delta of plan.pieces) emit("response.output_text.delta", { ...base, delta, logprobs: [] }, true);
    emit("response.output_text.done", { ...base, text: plan.text, logprobs: [] });
    emit("response.content_part.done", { ...base, part: final.content[0] });
  }
  emit("response.output_item.done", { output_index: index, item: final });
  emit(completed.status === "incomplete" ? "response.incomplete" : "response.completed", { response: completed });
  return frames;
}

/** An opaque stand-in for OpenAI's encrypted reasoning (base64 of what it stands for, deterministic). */
function encryptedContent(model: string, n: string, tokens: number): string {
  return `gAAAAB${Buffer.from(`sim-reasoning:${model}:${n}:${tokens}`).toString("base64")}`;
}

const isUser = (it: Item) => (it?.type === undefined || it?.type === "message") && it?.role === "user";
const isAssistantOutput = (it: Item) =>
  ((it?.type === undefined || it?.type === "message") && it?.role === "assistant") ||
  it?.type === "function_call" ||
  it?.type === "reasoning";

/** The user messages and function_call_outputs after the model's last output item (agent-turn.ts). */
function itemsTurn(items: readonly Item[]): ReturnType<typeof turnAfterAssistant> {
  const since = items.slice(items.findLastIndex(isAssistantOutput) + 1);
  const users = since.filter(isUser);
  const results = since.filter((it) => it?.type === "function_call_output");
  return turnAfterAssistant(
    users.map(contentText),
    results.map((r) => outputText(r.output)),
    users.length,
  );
}

function lastUserItemText(items: readonly Item[]): string {
  for (let i = items.length - 1; i >= 0; i--) if (isUser(items[i]!)) return contentText(items[i]!);
  return "";
}

function systemText(items: readonly Item[]): string {
  return items
    .filter((it) => it?.role === "system" || it?.role === "developer")
    .map(contentText)
    .join("\n");
}

function contentText(it: Item): string {
  if (typeof it.content === "string") return it.content;
  if (!Array.isArray(it.content)) return "";
  return it.content
    .map((p: Item) => (typeof p?.text === "string" ? p.text : ""))
    .filter(Boolean)
    .join("\n");
}

function outputText(output: unknown): string {
  if (typeof output === "string") return output;
  return Array.isArray(output) ? contentText({ content: output }) : "";
}

/** An item's input tokens: its texts, non-text parts at a flat rate, a call's name and arguments. */
function itemTokensOf(it: Item): number {
  if (it?.type === "function_call") return countTokens(it.name ?? "") + countTokens(it.arguments ?? "");
  if (it?.type === "function_call_output") return countTokens(outputText(it.output));
  if (it?.type === "reasoning") return 0; // OpenAI feeds the reasoning back; the simulator does not count it
  if (typeof it?.content === "string") return countTokens(it.content);
  let tokens = 0;
  if (Array.isArray(it?.content))
    for (const p of it.content as Item[])
      tokens += typeof p?.text === "string" ? countTokens(p.text) : NON_TEXT_PART_TOKENS;
  return tokens;
}

function functionTools(tools: Item[] | undefined): OfferedTool[] {
  if (!Array.isArray(tools)) return [];
  return tools
    .filter((t) => t?.type === "function" && typeof t.name === "string")
    .map((t) => ({ name: t.name, parameters: t.parameters }));
}

/** `none`; `required` or `{type: "function", name}`; else auto. */
function toolMode(choice: unknown): ToolMode {
  if (choice === "none") return { kind: "none" };
  if (choice === "required") return { kind: "forced" };
  if (typeof choice === "object" && choice !== null) {
    const name = (choice as { name?: string }).name;
    return { kind: "forced", name: name ?? "" };
  }
  return { kind: "auto" };
}
