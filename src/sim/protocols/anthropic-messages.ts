/**
 * Anthropic Messages (`POST /v1/messages`), JSON and SSE, as Anthropic sends them:
 * `message_start` (input and cache usage, `output_tokens: 1`), one `content_block_*` run
 * per block with a `ping` after the first start, `message_delta` with the cumulative final
 * usage, `message_stop`. `input_tokens` excludes cache reads and writes, which
 * `cache_control` breakpoints produce (prompt-cache.ts). Server tools offered report their
 * runs (`[sim:web_searches=N]`, `[sim:web_fetches=N]`) in `usage.server_tool_use`.
 */
import { chooseTool, jsonInstruction, turnAfterAssistant, type OfferedTool, type ToolMode } from "../agent-turn.ts";
import { obeyDirectives } from "../directive-effects.ts";
import { directiveInt, parseDirectives } from "../directives.ts";
import { readJsonBody } from "../http.ts";
import { explicitCacheUsage, type CacheBlock, type ExplicitCacheUsage } from "../prompt-cache.ts";
import { planReply, splitArgs, splitText, textOfTokens, type ReplyPlan } from "../reply-plan.ts";
import type { SimContext } from "../routes.ts";
import { sseResponse, type SseFrame } from "../sse.ts";
import {
  countJsonTokens,
  countTokens,
  NON_TEXT_PART_TOKENS,
  THINKING_TOKENS_BY_EFFORT,
  thinkingTokensForBudget,
} from "../tokens.ts";
import { anthropicError } from "./anthropic-errors.ts";

interface CacheControl {
  type?: string;
  ttl?: string;
}

interface AnthropicBlock {
  type?: string;
  text?: string;
  thinking?: string;
  name?: string;
  input?: unknown;
  content?: unknown;
  cache_control?: CacheControl | null;
}

export interface AnthropicMessage {
  role?: string;
  content?: string | AnthropicBlock[];
  cache_control?: CacheControl | null;
}

interface AnthropicTool {
  type?: string;
  name?: string;
  input_schema?: unknown;
  cache_control?: CacheControl | null;
}

export interface AnthropicRequest {
  model?: unknown;
  max_tokens?: unknown;
  messages?: unknown;
  system?: string | AnthropicBlock[];
  tools?: AnthropicTool[];
  tool_choice?: { type?: string; name?: string };
  thinking?: { type?: string; budget_tokens?: number };
  stream?: boolean;
  output_config?: { format?: AnthropicOutputFormat | null } | null;
  /** The structured-outputs beta's name for `output_config.format`. */
  output_format?: AnthropicOutputFormat | null;
}

interface AnthropicOutputFormat {
  type?: string;
  schema?: unknown;
}

interface AnthropicUsage {
  input_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
  output_tokens: number;
  server_tool_use?: { web_search_requests: number; web_fetch_requests: number };
}

export async function handleAnthropicMessages(ctx: SimContext): Promise<Response> {
  const { raw, body } = await readJsonBody<AnthropicRequest>(ctx);
  if (typeof body.model !== "string" || body.model === "") return anthropicError(400, "model: Field required");
  if (typeof body.max_tokens !== "number") return anthropicError(400, "max_tokens: Field required");
  if (!Array.isArray(body.messages) || body.messages.length === 0) {
    return anthropicError(400, "messages: at least one message is required");
  }
  const model = body.model;
  const messages = body.messages as AnthropicMessage[];
  const prefillError = prefillRefusal(messages, body.thinking);
  if (prefillError) return anthropicError(400, prefillError);
  const lastUserText = lastAnthropicUserText(messages);
  const directives = parseDirectives(lastUserText);
  const early = await obeyDirectives(ctx, directives, raw);
  if (early) return early;

  const { blocks, promptTokens: messageTokens, hasBreakpoint } = anthropicPromptBlocks(body, messages);
  const format = body.output_config?.format ?? body.output_format;
  const asked = format?.type === "json_schema" ? { schema: format.schema ?? { type: "object" } } : undefined;
  const promptTokens = messageTokens + (asked ? countJsonTokens(format) : 0);
  const json = asked ?? jsonInstruction(anthropicSystemText(body.system));
  const turn = anthropicTurn(messages);
  const cache = hasBreakpoint
    ? explicitCacheUsage(ctx.sim, ctx.provider, model, blocks)
    : { readTokens: 0, write5mTokens: 0, write1hTokens: 0 };
  const plan = planReply({
    provider: ctx.provider,
    model,
    lastUserText,
    directives,
    maxTokens: body.max_tokens,
    thinkingTokens: anthropicThinkingTokens(body.thinking),
    tool: chooseTool({
      tools: anthropicTools(body),
      mode: anthropicToolMode(body.tool_choice),
      endsWithUser: turn.endsWithUser,
      userText: lastUserText,
      directives,
    }),
    toolResultText: turn.toolResultText,
    json,
  });
  const usage: AnthropicUsage = {
    input_tokens: promptTokens - cache.readTokens - cache.write5mTokens - cache.write1hTokens,
    cache_creation_input_tokens: cache.write5mTokens + cache.write1hTokens,
    cache_read_input_tokens: cache.readTokens,
    output_tokens: plan.completionTokens,
  };
  const serverTools = serverToolUse(body, directives);
  if (serverTools) usage.server_tool_use = serverTools;
  const reply: AnthropicReply = {
    id: `msg_01SIM${ctx.sim.nextId()}`,
    toolId: `toolu_01SIM${ctx.sim.nextId()}`,
    model,
    plan,
    thinking:
      plan.thinkingTokens > 0 ? textOfTokens(`Thinking about the request to ${model}`, plan.thinkingTokens) : "",
    stopReason: plan.tool ? "tool_use" : plan.truncated ? "max_tokens" : "end_turn",
  };

  if (body.stream === true) {
    const frames = anthropicStreamFrames(reply, usage, cache);
    return sseResponse(ctx, frames, directives, { "content-type": "text/event-stream; charset=utf-8" });
  }
  return Response.json({
    model,
    id: reply.id,
    type: "message",
    role: "assistant",
    content: anthropicContent(reply),
    stop_reason: reply.stopReason,
    stop_sequence: null,
    usage: fullUsage(usage, cache, usage.output_tokens),
  });
}

interface AnthropicReply {
  id: string;
  toolId: string;
  model: string;
  plan: ReplyPlan;
  thinking: string;
  stopReason: string;
}

function anthropicContent(r: AnthropicReply): object[] {
  const content: object[] = [];
  if (r.thinking) content.push({ type: "thinking", thinking: r.thinking, signature: thinkingSignature(r.thinking) });
  if (r.plan.tool) content.push({ type: "tool_use", id: r.toolId, name: r.plan.tool.name, input: r.plan.tool.args });
  else content.push({ type: "text", text: r.plan.text });
  return content;
}

/** message_start and non-stream usage: with the `cache_creation` TTL split. */
function fullUsage(u: AnthropicUsage, cache: ExplicitCacheUsage, outputTokens: number): object {
  return {
    input_tokens: u.input_tokens,
    cache_creation_input_tokens: u.cache_creation_input_tokens,
    cache_read_input_tokens: u.cache_read_input_tokens,
    cache_creation: { ephemeral_5m_input_tokens: cache.write5mTokens, ephemeral_1h_input_tokens: cache.write1hTokens },
    output_tokens: outputTokens,
    ...(u.server_tool_use && { server_tool_use: u.server_tool_use }),
    service_tier: "standard",
    inference_geo: "not_available",
  };
}

function anthropicStreamFrames(r: AnthropicReply, usage: AnthropicUsage, cache: ExplicitCacheUsage): SseFrame[] {
  const frames: SseFrame[] = [];
  // The `event:` name always equals the JSON `type`, which comes first as Anthropic sends it.
  const event = (type: string, data: object = {}, content = false) =>
    frames.push({ text: `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`, content });
  event("message_start", {
    message: {
      model: r.model,
      id: r.id,
      type: "message",
      role: "assistant",
      content: [],
      stop_reason: null,
      stop_sequence: null,
      // A placeholder output count, as Anthropic sends it; message_delta has the real one.
      usage: fullUsage(usage, cache, 1),
    },
  });

  let index = 0;
  const start = (block: object) => {
    event("content_block_start", { index, content_block: block });
    if (index === 0) event("ping");
  };
  const delta = (d: object, content = true) => event("content_block_delta", { index, delta: d }, content);
  const stop = () => event("content_block_stop", { index: index++ });

  if (r.thinking) {
    start({ type: "thinking", thinking: "", signature: "" });
    for (const piece of splitText(r.thinking, r.plan.thinkingTokens))
      delta({ type: "thinking_delta", thinking: piece });
    delta({ type: "signature_delta", signature: thinkingSignature(r.thinking) }, false);
    stop();
  }
  if (r.plan.tool) {
    start({ type: "tool_use", id: r.toolId, name: r.plan.tool.name, input: {} });
    // Anthropic's first input fragment is empty; clients must not parse fragments alone.
    delta({ type: "input_json_delta", partial_json: "" }, false);
    for (const piece of splitArgs(r.plan.tool.argsJson)) delta({ type: "input_json_delta", partial_json: piece });
    stop();
  } else {
    start({ type: "text", text: "" });
    for (const piece of r.plan.pieces) delta({ type: "text_delta", text: piece });
    stop();
  }
  event("message_delta", { delta: { stop_reason: r.stopReason, stop_sequence: null }, usage });
  event("message_stop");
  return frames;
}

/** An opaque, deterministic stand-in for Anthropic's thinking signature. */
function thinkingSignature(thinking: string): string {
  return Buffer.from(`sim-signature:${Bun.hash.wyhash(thinking).toString(16)}`).toString("base64");
}

function anthropicThinkingTokens(thinking: AnthropicRequest["thinking"]): number {
  if (thinking?.type === "enabled") return thinkingTokensForBudget(thinking.budget_tokens ?? 0);
  if (thinking?.type === "adaptive") return THINKING_TOKENS_BY_EFFORT.medium!;
  return 0;
}

/** The client tools offered (server tools such as `web_search_…` are the vendor's own). */
function anthropicTools(body: AnthropicRequest): OfferedTool[] {
  if (!Array.isArray(body.tools)) return [];
  return body.tools
    .filter((t) => typeof t?.name === "string" && (t.type === undefined || t.type === "custom"))
    .map((t) => ({ name: t.name!, parameters: t.input_schema }));
}

/**
 * The server tools "run" for the call: `[sim:web_searches=N]` and `[sim:web_fetches=N]`, each
 * with its tool (`web_search_…`, `web_fetch_…`) offered, at most its `max_uses`, reported as
 * Anthropic does in `usage.server_tool_use`; null when no server tool is offered.
 */
function serverToolUse(
  body: AnthropicRequest,
  directives: ReturnType<typeof parseDirectives>,
): AnthropicUsage["server_tool_use"] | null {
  const tools = Array.isArray(body.tools) ? (body.tools as (AnthropicTool & { max_uses?: number })[]) : [];
  const ran = (prefix: string, directive: string) => {
    const tool = tools.find((t) => typeof t?.type === "string" && t.type.startsWith(prefix));
    if (!tool) return null;
    const asked = directiveInt(directives, directive) ?? 0;
    return typeof tool.max_uses === "number" ? Math.min(asked, tool.max_uses) : asked;
  };
  const searches = ran("web_search_", "web_searches");
  const fetches = ran("web_fetch_", "web_fetches");
  if (searches === null && fetches === null) return null;
  return { web_search_requests: searches ?? 0, web_fetch_requests: fetches ?? 0 };
}

/** `{type: "none"}`; `{type: "any"}` (first tool) or `{type: "tool", name}`; else auto. */
function anthropicToolMode(choice: AnthropicRequest["tool_choice"]): ToolMode {
  if (choice?.type === "none") return { kind: "none" };
  if (choice?.type === "any") return { kind: "forced" };
  if (choice?.type === "tool") return { kind: "forced", name: choice.name ?? "" };
  return { kind: "auto" };
}

/** The system prompt's text (string or text blocks). */
function anthropicSystemText(system: AnthropicRequest["system"]): string {
  if (typeof system === "string") return system;
  if (!Array.isArray(system)) return "";
  return system
    .filter((b) => b?.type === "text" && typeof b.text === "string")
    .map((b) => b.text)
    .join("\n");
}

/**
 * The user's texts and `tool_result` contents after the last assistant message
 * (agent-turn.ts). Claude Code sends reminders as text blocks beside its tool results.
 */
function anthropicTurn(messages: readonly AnthropicMessage[]): ReturnType<typeof turnAfterAssistant> {
  const since = messages.slice(messages.findLastIndex((m) => m?.role === "assistant") + 1);
  const users = since.filter((m) => m?.role === "user");
  const texts: string[] = [];
  const results: string[] = [];
  for (const m of users) {
    const blocks = typeof m.content === "string" ? [{ type: "text", text: m.content }] : (m.content ?? []);
    for (const b of blocks) {
      if (b?.type === "text" && typeof b.text === "string") texts.push(b.text);
      else if (b?.type === "tool_result") results.push(toolResultText(b));
    }
  }
  return turnAfterAssistant(texts, results, users.length);
}

/** A `tool_result` block's text: string content or its text blocks. */
function toolResultText(b: AnthropicBlock): string {
  if (typeof b.content === "string") return b.content;
  if (!Array.isArray(b.content)) return "";
  return (b.content as AnthropicBlock[])
    .filter((c) => c?.type === "text" && typeof c.text === "string")
    .map((c) => c.text)
    .join("\n");
}

/**
 * Anthropic's rules for a prefill (a last, assistant, turn): its text must not end in
 * whitespace, and extended thinking does not take one. The reason, or null when it is fine.
 */
function prefillRefusal(messages: readonly AnthropicMessage[], thinking: AnthropicRequest["thinking"]): string | null {
  const last = messages.at(-1);
  if (last?.role !== "assistant") return null;
  if (thinking?.type === "enabled")
    return "Prefilling the assistant message is not supported when thinking is enabled.";
  const blocks = typeof last.content === "string" ? [{ type: "text", text: last.content }] : (last.content ?? []);
  const text = blocks.at(-1)?.type === "text" ? (blocks.at(-1)!.text ?? "") : "";
  return /\s$/.test(text) ? "messages: final assistant content cannot end with trailing whitespace" : null;
}

/** Text of the last `user` message: string content or its text blocks (not tool results). */
function lastAnthropicUserText(messages: readonly AnthropicMessage[]): string {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i];
    if (m?.role !== "user") continue;
    if (typeof m.content === "string") return m.content;
    if (!Array.isArray(m.content)) return "";
    return m.content
      .filter((b) => b?.type === "text" && typeof b.text === "string")
      .map((b) => b.text)
      .join("\n");
  }
  return "";
}

// Block identities must not depend on where the breakpoint marker sits.
const withoutCacheControl = (key: string, value: unknown) => (key === "cache_control" ? undefined : value);

interface PromptEntry {
  value: unknown;
  role: string;
  tokens: number;
  cache?: CacheControl | null;
}

/**
 * The prompt in Anthropic's cache order — tools, system, messages — one entry per tool,
 * system block and content block, with its tokens and breakpoint. Keys (JSON) are built
 * only when some block carries `cache_control`.
 */
export function anthropicPromptBlocks(
  body: AnthropicRequest,
  messages: readonly AnthropicMessage[],
): { blocks: CacheBlock[]; promptTokens: number; hasBreakpoint: boolean } {
  const entries: PromptEntry[] = [];
  if (Array.isArray(body.tools)) {
    for (const tool of body.tools) {
      entries.push({
        value: tool,
        role: "tool",
        tokens: countTokens(JSON.stringify(tool, withoutCacheControl)),
        cache: tool?.cache_control,
      });
    }
  }
  if (typeof body.system === "string")
    entries.push({ value: body.system, role: "system", tokens: countTokens(body.system) });
  else if (Array.isArray(body.system)) {
    for (const b of body.system)
      entries.push({ value: b, role: "system", tokens: blockTokens(b), cache: b?.cache_control });
  }
  for (const m of messages) {
    const role = m?.role ?? "user";
    if (typeof m?.content === "string") {
      entries.push({ value: m.content, role, tokens: countTokens(m.content), cache: m.cache_control });
    } else if (Array.isArray(m?.content)) {
      m.content.forEach((b, i, all) => {
        // A message-level marker ends the prefix after the message's last block.
        const cache = b?.cache_control ?? (i === all.length - 1 ? m.cache_control : undefined);
        entries.push({ value: b, role, tokens: blockTokens(b), cache });
      });
    }
  }

  let promptTokens = 0;
  let hasBreakpoint = false;
  for (const e of entries) {
    promptTokens += e.tokens;
    if (e.cache?.type === "ephemeral") hasBreakpoint = true;
  }
  const blocks = hasBreakpoint
    ? entries.map((e): CacheBlock => {
        const block: CacheBlock = {
          key: `${e.role}:${JSON.stringify(e.value, withoutCacheControl)}`,
          tokens: e.tokens,
        };
        if (e.cache?.type === "ephemeral") block.breakpoint = e.cache.ttl === "1h" ? "1h" : "5m";
        return block;
      })
    : [];
  return { blocks, promptTokens, hasBreakpoint };
}

/** Prompt tokens of one content block. */
function blockTokens(b: AnthropicBlock | undefined): number {
  if (!b || typeof b !== "object") return 0;
  switch (b.type) {
    case "text":
      return countTokens(b.text ?? "");
    case "thinking":
      return countTokens(b.thinking ?? "");
    case "redacted_thinking":
      return 0;
    case "tool_use":
      return countTokens(b.name ?? "") + countTokens(JSON.stringify(b.input ?? {}));
    case "tool_result":
      if (typeof b.content === "string") return countTokens(b.content);
      if (Array.isArray(b.content)) return (b.content as AnthropicBlock[]).reduce((n, c) => n + blockTokens(c), 0);
      return 0;
    case "image":
      return NON_TEXT_PART_TOKENS;
    default:
      // Server tool calls and their results (web search results, fetched pages), documents,
      // search results: their content is read, as its JSON text.
      return countJsonTokens({ ...b, cache_control: undefined });
  }
}
