/**
 * Gemini `models/{model}:generateContent` and `:streamGenerateContent` as Google sends
 * them. With `?alt=sse` the stream is `data: <json>` frames separated by CRLF CRLF, no
 * `event:` lines and no `[DONE]`; every chunk carries the cumulative `usageMetadata`, and a
 * last chunk (empty text part) carries `finishReason`. Without `alt=sse` the chunks come as
 * one JSON array. Zero-valued usage fields are omitted, as proto3 JSON does.
 */
import { chooseTool, jsonInstruction, turnAfterAssistant, type OfferedTool, type ToolMode } from "../agent-turn.ts";
import { obeyDirectives } from "../directive-effects.ts";
import { parseDirectives } from "../directives.ts";
import { readJsonBody } from "../http.ts";
import { automaticCachedTokens } from "../prompt-cache.ts";
import { planReply, type ReplyPlan } from "../reply-plan.ts";
import type { SimContext } from "../routes.ts";
import { sseResponse } from "../sse.ts";
import {
  countJsonTokens,
  countTokens,
  NON_TEXT_PART_TOKENS,
  THINKING_TOKENS_BY_EFFORT,
  thinkingTokensForBudget,
} from "../tokens.ts";
import { geminiError } from "./gemini-errors.ts";

interface GeminiPart {
  text?: string;
  thought?: boolean;
  functionCall?: { name?: string; args?: unknown };
  functionResponse?: { name?: string; response?: unknown };
}

interface GeminiContent {
  role?: string;
  parts?: GeminiPart[];
}

interface GeminiFunctionDeclaration {
  name?: string;
  parameters?: unknown;
  parametersJsonSchema?: unknown;
}

interface ThinkingConfig {
  thinkingBudget?: number;
  thinkingLevel?: string;
  includeThoughts?: boolean;
}

interface GeminiRequest {
  contents?: unknown;
  systemInstruction?: GeminiContent;
  system_instruction?: GeminiContent;
  generationConfig?: {
    maxOutputTokens?: number;
    thinkingConfig?: ThinkingConfig;
    responseMimeType?: string;
    responseJsonSchema?: unknown;
    responseSchema?: unknown;
  };
  tools?: { functionDeclarations?: GeminiFunctionDeclaration[] }[];
  toolConfig?: { functionCallingConfig?: { mode?: string; allowedFunctionNames?: string[] } };
}

export async function handleGeminiGenerate(ctx: SimContext): Promise<Response> {
  return generate(ctx, false);
}

export async function handleGeminiStream(ctx: SimContext): Promise<Response> {
  return generate(ctx, true);
}

async function generate(ctx: SimContext, stream: boolean): Promise<Response> {
  const { raw, body } = await readJsonBody<GeminiRequest>(ctx);
  const model = ctx.params.model ?? "";
  if (!Array.isArray(body.contents) || body.contents.length === 0) {
    return geminiError(400, "* GenerateContentRequest.contents: contents is not specified\n");
  }
  const contents = body.contents as GeminiContent[];
  const lastUserText = lastGeminiUserText(contents);
  const directives = parseDirectives(lastUserText);
  const early = await obeyDirectives(ctx, directives, raw);
  if (early) return early;

  const system = body.systemInstruction ?? body.system_instruction;
  const items: GeminiContent[] = system ? [system, ...contents] : contents;
  const itemTokens = items.map(contentTokens);
  let promptTokens = 0;
  for (const t of itemTokens) promptTokens += t;
  const declarations = (body.tools ?? []).flatMap((t) => t?.functionDeclarations ?? []);
  for (const d of declarations) promptTokens += countJsonTokens(d);
  const format = geminiJsonFormat(body.generationConfig);
  if (format?.schema !== undefined) promptTokens += countJsonTokens(format.schema);
  const json = format ?? jsonInstruction(partsText(system));
  const turn = geminiTurn(contents);
  const cachedTokens = automaticCachedTokens(ctx.sim, ctx.provider, model, items, itemTokens);

  const thinking = body.generationConfig?.thinkingConfig;
  const plan = planReply({
    provider: ctx.provider,
    model,
    lastUserText,
    directives,
    maxTokens: body.generationConfig?.maxOutputTokens,
    thinkingTokens: geminiThinkingTokens(thinking),
    tool: chooseTool({
      tools: geminiTools(declarations),
      mode: geminiToolMode(body, declarations),
      endsWithUser: turn.endsWithUser,
      userText: lastUserText,
      directives,
    }),
    toolResultText: turn.toolResultText,
    json,
  });
  const reply: GeminiReply = {
    model,
    responseId: `SIMresp-${ctx.sim.nextId()}`,
    plan,
    promptTokens,
    cachedTokens,
    thoughtSummary:
      thinking?.includeThoughts && plan.thinkingTokens > 0 ? `**Thinking**\n\nSimulated thoughts of ${model}.` : "",
    finishReason: plan.truncated ? "MAX_TOKENS" : "STOP",
  };

  if (!stream) {
    const parts: object[] = [];
    if (reply.thoughtSummary) parts.push({ text: reply.thoughtSummary, thought: true });
    parts.push(plan.tool ? { functionCall: { name: plan.tool.name, args: plan.tool.args } } : { text: plan.text });
    return Response.json(
      chunk(
        reply,
        { content: { parts, role: "model" }, finishReason: reply.finishReason, index: 0 },
        plan.outputTokens,
      ),
    );
  }
  const frames = geminiStreamChunks(reply);
  if (ctx.url.searchParams.get("alt") !== "sse") {
    // Without alt=sse Google streams one JSON array; the simulator sends it in one piece.
    return new Response(`[${frames.map((f) => JSON.stringify(f.chunk)).join(",\r\n")}]`, {
      headers: { "content-type": "application/json; charset=UTF-8" },
    });
  }
  return sseResponse(
    ctx,
    frames.map((f) => ({ text: `data: ${JSON.stringify(f.chunk)}\r\n\r\n`, content: f.content })),
    directives,
    { "content-type": "text/event-stream" },
  );
}

interface GeminiReply {
  model: string;
  responseId: string;
  plan: ReplyPlan;
  promptTokens: number;
  cachedTokens: number;
  thoughtSummary: string;
  finishReason: string;
}

function geminiStreamChunks(r: GeminiReply): { chunk: object; content: boolean }[] {
  const out: { chunk: object; content: boolean }[] = [];
  const candidate = (parts: object[]) => ({ content: { parts, role: "model" }, index: 0 });
  if (r.thoughtSummary)
    out.push({ chunk: chunk(r, candidate([{ text: r.thoughtSummary, thought: true }]), 0), content: true });
  if (r.plan.tool) {
    const call = { functionCall: { name: r.plan.tool.name, args: r.plan.tool.args } };
    out.push({ chunk: chunk(r, candidate([call]), r.plan.outputTokens), content: true });
  } else {
    let sent = "";
    for (const piece of r.plan.pieces) {
      sent += piece;
      // Usage is cumulative: the tokens of all the text sent so far.
      out.push({ chunk: chunk(r, candidate([{ text: piece }]), countTokens(sent)), content: true });
    }
  }
  const last = { content: { parts: [{ text: "" }], role: "model" }, finishReason: r.finishReason, index: 0 };
  out.push({ chunk: chunk(r, last, r.plan.outputTokens), content: false });
  return out;
}

function chunk(r: GeminiReply, candidate: object, candidatesTokens: number): object {
  return {
    candidates: [candidate],
    usageMetadata: usageMetadata(r.promptTokens, r.cachedTokens, candidatesTokens, r.plan.thinkingTokens),
    modelVersion: r.model,
    responseId: r.responseId,
  };
}

/** promptTokenCount includes the cached tokens; thoughts count in the total, not in candidates. */
function usageMetadata(prompt: number, cached: number, candidates: number, thoughts: number): object {
  const u: Record<string, unknown> = { promptTokenCount: prompt };
  if (candidates > 0) u.candidatesTokenCount = candidates;
  u.totalTokenCount = prompt + candidates + thoughts;
  if (cached > 0) u.cachedContentTokenCount = cached;
  u.promptTokensDetails = [{ modality: "TEXT", tokenCount: prompt }];
  if (cached > 0) u.cacheTokensDetails = [{ modality: "TEXT", tokenCount: cached }];
  if (thoughts > 0) u.thoughtsTokenCount = thoughts;
  return u;
}

/** Thinking only when asked for: a positive (or dynamic -1) budget, or a level. */
function geminiThinkingTokens(config: ThinkingConfig | undefined): number {
  if (!config) return 0;
  if (typeof config.thinkingBudget === "number") return thinkingTokensForBudget(config.thinkingBudget);
  if (typeof config.thinkingLevel === "string")
    return THINKING_TOKENS_BY_EFFORT[config.thinkingLevel.toLowerCase()] ?? 0;
  return 0;
}

/** `responseMimeType: application/json`, with `responseJsonSchema` or (OpenAPI-style) `responseSchema`. */
function geminiJsonFormat(config: GeminiRequest["generationConfig"]): { schema?: unknown } | undefined {
  if (config?.responseMimeType?.toLowerCase() !== "application/json") return undefined;
  const schema = config.responseJsonSchema ?? config.responseSchema;
  return schema === undefined ? {} : { schema };
}

/** The declared functions, by name. */
function geminiTools(declarations: GeminiFunctionDeclaration[]): OfferedTool[] {
  return declarations
    .filter((d) => typeof d?.name === "string")
    .map((d) => ({ name: d.name!, parameters: d.parameters ?? d.parametersJsonSchema }));
}

/** `NONE`; `ANY` (the first declared function that is allowed); else (`AUTO`) auto. */
function geminiToolMode(body: GeminiRequest, declarations: GeminiFunctionDeclaration[]): ToolMode {
  const config = body.toolConfig?.functionCallingConfig;
  const mode = config?.mode?.toUpperCase();
  if (mode === "NONE") return { kind: "none" };
  if (mode !== "ANY") return { kind: "auto" };
  const allowed = config?.allowedFunctionNames;
  if (!Array.isArray(allowed) || allowed.length === 0) return { kind: "forced" };
  return { kind: "forced", name: declarations.find((d) => d?.name && allowed.includes(d.name))?.name ?? "" };
}

/** The user's texts and function responses after the last `model` content (agent-turn.ts). */
function geminiTurn(contents: readonly GeminiContent[]): ReturnType<typeof turnAfterAssistant> {
  const since = contents.slice(contents.findLastIndex((c) => c?.role === "model") + 1);
  const texts: string[] = [];
  const results: string[] = [];
  let users = 0;
  for (const c of since) {
    if (c?.role === undefined || c.role === "user") users++;
    for (const p of c?.parts ?? []) {
      if (p?.functionResponse) results.push(JSON.stringify(p.functionResponse.response ?? {}));
      else if (typeof p?.text === "string" && !p.thought) texts.push(p.text);
    }
  }
  return turnAfterAssistant(texts, results, users);
}

/** A content's text parts, thoughts excluded (the system instruction's text). */
function partsText(c: GeminiContent | undefined): string {
  return (c?.parts ?? [])
    .filter((p) => typeof p?.text === "string" && !p.thought)
    .map((p) => p.text)
    .join("\n");
}

/** Text of the last user content (role `user` or none): its text parts, thoughts excluded. */
function lastGeminiUserText(contents: readonly GeminiContent[]): string {
  for (let i = contents.length - 1; i >= 0; i--) {
    const c = contents[i];
    if (c?.role !== undefined && c.role !== "user") continue;
    return (c?.parts ?? [])
      .filter((p) => typeof p?.text === "string" && !p.thought)
      .map((p) => p.text)
      .join("\n");
  }
  return "";
}

/** Prompt tokens of one content: texts, function calls/responses as JSON, other parts flat. */
function contentTokens(c: GeminiContent): number {
  let tokens = 0;
  for (const p of c?.parts ?? []) {
    if (typeof p?.text === "string") tokens += countTokens(p.text);
    else if (p?.functionCall)
      tokens += countTokens(p.functionCall.name ?? "") + countJsonTokens(p.functionCall.args ?? {});
    else if (p?.functionResponse)
      tokens += countTokens(p.functionResponse.name ?? "") + countJsonTokens(p.functionResponse.response ?? {});
    else tokens += NON_TEXT_PART_TOKENS;
  }
  return tokens;
}
