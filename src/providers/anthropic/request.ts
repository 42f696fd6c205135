/**
 * Canonical ChatRequest → Anthropic Messages request body.
 *
 * - system messages (wherever they are) → top-level `system` text blocks, `cache_control` kept;
 * - user/assistant/tool messages → alternating turns (consecutive turns of one role merged);
 *   tool results → `tool_result` blocks in a user turn; assistant `tool_calls` → `tool_use`;
 * - images: data URLs → base64 source, other URLs → url source; `cache_control` kept on parts;
 * - tools → `{name, description, input_schema}`; tool_choice auto/none/required/function →
 *   auto/none/any/tool; `parallel_tool_calls: false` → `disable_parallel_tool_use: true`;
 * - stop → stop_sequences; temperature clamped to Anthropic's 0..1;
 * - reasoning_effort → `thinking` (see {@link ANTHROPIC_THINKING_BUDGETS});
 * - response_format json_object / json_schema → `output_config.format` or a forced tool
 *   (structured.ts).
 * Not supported by the Messages API and dropped: seed, penalties, logit_bias, service_tier,
 * passthrough extras; with thinking on, temperature and a top_p below 0.95 are dropped too,
 * and a reasoning_effort thinking cannot honour (a forced tool, max_tokens ≤ 1024). Each drop
 * is reported (buildAnthropicRequest).
 */
import type { ChatMessage, ChatRequest, ContentPart, ReasoningEffort, ToolChoice } from "../../core/model/types";
import { anthropicStructuredOutput } from "./structured";
import type { AnthropicWireBlock, AnthropicWireMessage } from "./wire";
import { ANTHROPIC_MIN_THINKING_BUDGET, ANTHROPIC_THINKING_BUDGETS } from "../../core/model/thinking";
import type { DroppedSetting } from "../../core/upstream/warnings";
import { droppedIfSet, type BuiltRequest } from "../common/dropped";

export { ANTHROPIC_MIN_THINKING_BUDGET, ANTHROPIC_THINKING_BUDGETS };

/**
 * The thinking budget for an effort and a max_tokens, or undefined for no thinking.
 * Anthropic requires 1024 ≤ budget < max_tokens, and max_tokens also sizes the credit hold,
 * so it is never raised. The budget leaves at least 1024 tokens for the answer when it can:
 * `budget = max(1024, min(table[effort], max_tokens − 1024))`; when even 1024 is not below
 * max_tokens (max_tokens ≤ 1024), thinking is left off.
 */
export function anthropicThinkingBudget(effort: ReasoningEffort | undefined, maxTokens: number): number | undefined {
  if (effort === undefined || effort === "none") return undefined;
  const budget = Math.max(
    ANTHROPIC_MIN_THINKING_BUDGET,
    Math.min(ANTHROPIC_THINKING_BUDGETS[effort], maxTokens - 1024),
  );
  return budget < maxTokens ? budget : undefined;
}

/** Builds the request body. Pure. */
export function toAnthropicRequest(req: ChatRequest, opts: { stream: boolean }): Record<string, unknown> {
  return buildAnthropicRequest(req, opts).body;
}

/** Settings the Messages API has no field for. */
const UNSUPPORTED = ["seed", "frequency_penalty", "presence_penalty", "logit_bias", "service_tier"];
const WITH_THINKING = "not sent with extended thinking";

/** The body and the settings it leaves out (see the list above). Pure. */
export function buildAnthropicRequest(req: ChatRequest, opts: { stream: boolean }): BuiltRequest {
  const dropped: DroppedSetting[] = [
    ...droppedIfSet(req, UNSUPPORTED),
    ...Object.keys(req.passthrough ?? {}).map((setting) => ({ setting })),
    // The client's own settings the translation has no field for (its own body is not sent).
    ...(req.unmapped ?? []),
  ];
  const system: AnthropicWireBlock[] = [];
  const messages: AnthropicWireMessage[] = [];
  const push = (role: "user" | "assistant", blocks: AnthropicWireBlock[]): void => {
    if (blocks.length === 0) return;
    const last = messages[messages.length - 1];
    if (last && last.role === role) last.content.push(...blocks);
    else messages.push({ role, content: blocks });
  };
  for (const m of req.messages) {
    switch (m.role) {
      case "system":
        system.push(...toAnthropicBlocks(m.content));
        break;
      case "user":
        push("user", toAnthropicBlocks(m.content));
        break;
      case "assistant":
        push("assistant", [...toAnthropicBlocks(m.content), ...toAnthropicToolUses(m)]);
        break;
      case "tool":
        push("user", [toAnthropicToolResult(m)]);
        break;
    }
  }

  const body: Record<string, unknown> = { model: req.model, max_tokens: req.max_tokens };
  if (system.length > 0) body.system = system;
  body.messages = messages;

  const structured = anthropicStructuredOutput(req);
  const forcedTool =
    req.tool_choice === "required" || typeof req.tool_choice === "object" || structured?.path === "tool";
  // Anthropic refuses thinking together with a forced tool: the forced tool wins.
  const budget = forcedTool ? undefined : anthropicThinkingBudget(req.reasoning_effort, req.max_tokens);
  if (budget !== undefined) body.thinking = { type: "enabled", budget_tokens: budget };

  if (budget === undefined && req.reasoning_effort !== undefined && req.reasoning_effort !== "none") {
    dropped.push({
      setting: "reasoning_effort",
      details: forcedTool ? "not sent with a forced tool" : "max_tokens leaves no room for thinking",
    });
  }

  // With thinking on, Anthropic rejects temperature (other than 1) and top_p below 0.95.
  if (req.temperature !== undefined) {
    if (budget === undefined) body.temperature = Math.min(1, Math.max(0, req.temperature));
    else dropped.push({ setting: "temperature", details: WITH_THINKING });
  }
  if (req.top_p !== undefined) {
    if (budget === undefined || req.top_p >= 0.95) body.top_p = req.top_p;
    else dropped.push({ setting: "top_p", details: WITH_THINKING });
  }
  if (req.stop !== undefined) {
    const stops = (Array.isArray(req.stop) ? req.stop : [req.stop]).filter((s) => s.length > 0);
    if (stops.length > 0) body.stop_sequences = stops;
  }
  const tools: Record<string, unknown>[] = [];
  if (req.tools && req.tools.length > 0) {
    tools.push(
      ...req.tools.map((t) => {
        const tool: Record<string, unknown> = {
          name: t.function.name,
          input_schema: t.function.parameters ?? { type: "object", properties: {} },
        };
        if (t.function.description !== undefined) tool.description = t.function.description;
        return tool;
      }),
    );
    const choice = toAnthropicToolChoice(req.tool_choice, req.parallel_tool_calls);
    if (choice) body.tool_choice = choice;
  }
  if (structured?.path === "tool") {
    tools.push(structured.tool);
    body.tool_choice = structured.toolChoice;
  }
  if (tools.length > 0) body.tools = tools;
  if (structured?.path === "native") body.output_config = { format: structured.format };
  if (opts.stream) body.stream = true;
  return { body, dropped };
}

/** auto → auto, none → none, required → any, {function} → {type: tool, name}. */
export function toAnthropicToolChoice(
  choice: ToolChoice | undefined,
  parallel: boolean | undefined,
): Record<string, unknown> | undefined {
  let out: Record<string, unknown> | undefined;
  if (choice === undefined) out = parallel === false ? { type: "auto" } : undefined;
  else if (choice === "auto") out = { type: "auto" };
  else if (choice === "none") return { type: "none" };
  else if (choice === "required") out = { type: "any" };
  else out = { type: "tool", name: choice.function.name };
  if (out && parallel === false) out.disable_parallel_tool_use = true;
  return out;
}

function toAnthropicBlocks(content: ChatMessage["content"]): AnthropicWireBlock[] {
  if (content === null) return [];
  if (typeof content === "string") return content.length > 0 ? [{ type: "text", text: content }] : [];
  const out: AnthropicWireBlock[] = [];
  for (const p of content) {
    const block = toAnthropicPart(p);
    if (block) out.push(block);
  }
  return out;
}

function toAnthropicPart(p: ContentPart): AnthropicWireBlock | undefined {
  let block: AnthropicWireBlock;
  if (p.type === "text") {
    if (p.text.length === 0) return undefined; // Anthropic rejects empty text blocks
    block = { type: "text", text: p.text };
  } else {
    const data = /^data:([^;,]+);base64,(.*)$/s.exec(p.image_url.url);
    block = data
      ? { type: "image", source: { type: "base64", media_type: data[1]!, data: data[2]! } }
      : { type: "image", source: { type: "url", url: p.image_url.url } };
  }
  if (p.cache_control) block.cache_control = p.cache_control;
  return block;
}

function toAnthropicToolUses(m: ChatMessage): AnthropicWireBlock[] {
  return (m.tool_calls ?? []).map((tc) => ({
    type: "tool_use",
    id: tc.id,
    name: tc.function.name,
    input: parseToolArguments(tc.function.arguments),
  }));
}

/** Tool arguments are a JSON string on the OpenAI side and an object here; bad JSON becomes {}. */
function parseToolArguments(args: string): unknown {
  if (args.trim() === "") return {};
  try {
    const v = JSON.parse(args);
    return typeof v === "object" && v !== null && !Array.isArray(v) ? v : {};
  } catch {
    return {};
  }
}

function toAnthropicToolResult(m: ChatMessage): AnthropicWireBlock {
  const content =
    typeof m.content === "string" || m.content === null ? (m.content ?? "") : toAnthropicBlocks(m.content);
  return { type: "tool_result", tool_use_id: m.tool_call_id ?? "", content };
}
