/**
 * Canonical ChatRequest → Gemini generateContent request body.
 *
 * - system messages → `systemInstruction`; user → role `user`; assistant → role `model`
 *   (text and `functionCall` parts); tool results → `functionResponse` parts in a `user` turn
 *   (the function name is looked up from the assistant's tool call with that id);
 *   consecutive turns of one role are merged;
 * - images: data URLs → `inlineData`, other URLs → `fileData`;
 * - generationConfig: temperature, topP, maxOutputTokens, stopSequences, seed, presence and
 *   frequency penalties, responseMimeType `application/json` for json_object / json_schema
 *   (plus `responseJsonSchema` for json_schema), thinkingConfig from reasoning_effort;
 * - tools → one `functionDeclarations` tool; tool_choice → toolConfig.functionCallingConfig
 *   (auto → AUTO, none → NONE, required → ANY, function → ANY + allowedFunctionNames).
 * Not supported and dropped: logit_bias, parallel_tool_calls, service_tier, cache_control,
 * passthrough extras, the client dialect's settings the canonical request could not say
 * (`req.unmapped`); each reported but cache_control, a caching hint: buildGeminiRequest.
 */
import type { ChatMessage, ChatRequest, ContentPart, ReasoningEffort, ToolChoice } from "../../core/model/types";
import type { GeminiWireContent, GeminiWirePart } from "./wire";
import { droppedIfSet, type BuiltRequest } from "../common/dropped";

/**
 * reasoning_effort → thinkingBudget for Gemini 2.5 models, before the per-model clamp
 * ({@link geminiThinkingConfig}). `max` is -1: dynamic thinking, as much as the model wants.
 */
export const GEMINI_THINKING_BUDGETS: Record<ReasoningEffort, number> = {
  none: 0,
  minimal: 512,
  low: 1024,
  medium: 8192,
  high: 16384,
  xhigh: 24576,
  max: -1,
};

/**
 * The thinkingConfig for a model and effort (undefined: leave the model's default, which is
 * dynamic thinking). Gemini 3 models take `thinkingLevel` (none/minimal → minimal, low → low,
 * medium → medium, high/xhigh/max → high). Gemini 2.5 models take `thinkingBudget` from
 * {@link GEMINI_THINKING_BUDGETS}, clamped to the model's range: Pro 128..32768 (it cannot
 * turn thinking off, so `none` becomes 128), Flash 0..24576, Flash-Lite 512..24576 (0 allowed).
 */
export function geminiThinkingConfig(
  model: string,
  effort: ReasoningEffort | undefined,
): Record<string, unknown> | undefined {
  if (effort === undefined) return undefined;
  if (/gemini-3/.test(model)) {
    const level =
      effort === "none" || effort === "minimal" ? "minimal" : effort === "low" || effort === "medium" ? effort : "high";
    return { thinkingLevel: level };
  }
  let budget = GEMINI_THINKING_BUDGETS[effort];
  if (budget === -1) return { thinkingBudget: -1 };
  const isPro = /pro/.test(model);
  const isLite = /flash-lite/.test(model);
  const max = isPro ? 32768 : 24576;
  const min = isPro ? 128 : isLite ? 512 : 0;
  if (budget === 0 && !isPro) return { thinkingBudget: 0 };
  budget = Math.min(max, Math.max(min, budget));
  return { thinkingBudget: budget };
}

/** auto → AUTO, none → NONE, required → ANY, {function} → ANY restricted to that name. */
export function toGeminiToolConfig(choice: ToolChoice | undefined): Record<string, unknown> | undefined {
  if (choice === undefined) return undefined;
  if (choice === "auto") return { functionCallingConfig: { mode: "AUTO" } };
  if (choice === "none") return { functionCallingConfig: { mode: "NONE" } };
  if (choice === "required") return { functionCallingConfig: { mode: "ANY" } };
  return { functionCallingConfig: { mode: "ANY", allowedFunctionNames: [choice.function.name] } };
}

/** Builds the request body. Pure. */
export function toGeminiRequest(req: ChatRequest): Record<string, unknown> {
  return buildGeminiRequest(req).body;
}

/** The body and the settings generateContent has no field for. Pure. */
export function buildGeminiRequest(req: ChatRequest): BuiltRequest {
  return {
    body: geminiBody(req),
    dropped: [
      ...droppedIfSet(req, ["logit_bias", "parallel_tool_calls", "service_tier"]),
      ...Object.keys(req.passthrough ?? {}).map((setting) => ({ setting })),
      ...(req.unmapped ?? []),
    ],
  };
}

function geminiBody(req: ChatRequest): Record<string, unknown> {
  const systemParts: GeminiWirePart[] = [];
  const contents: GeminiWireContent[] = [];
  const toolNames = new Map<string, string>();
  const push = (role: "user" | "model", parts: GeminiWirePart[]): void => {
    if (parts.length === 0) return;
    const last = contents[contents.length - 1];
    if (last && last.role === role) last.parts.push(...parts);
    else contents.push({ role, parts });
  };
  for (const m of req.messages) {
    switch (m.role) {
      case "system":
        systemParts.push(...toGeminiParts(m.content));
        break;
      case "user":
        push("user", toGeminiParts(m.content));
        break;
      case "assistant": {
        const calls: GeminiWirePart[] = (m.tool_calls ?? []).map((tc) => {
          toolNames.set(tc.id, tc.function.name);
          return { functionCall: { name: tc.function.name, args: parseArgs(tc.function.arguments) } };
        });
        push("model", [...toGeminiParts(m.content), ...calls]);
        break;
      }
      case "tool":
        push("user", [toGeminiFunctionResponse(m, toolNames)]);
        break;
    }
  }

  const body: Record<string, unknown> = { contents };
  if (systemParts.length > 0) body.systemInstruction = { parts: systemParts };

  const gen: Record<string, unknown> = { maxOutputTokens: req.max_tokens };
  if (req.temperature !== undefined) gen.temperature = req.temperature;
  if (req.top_p !== undefined) gen.topP = req.top_p;
  if (req.stop !== undefined) {
    const stops = (Array.isArray(req.stop) ? req.stop : [req.stop]).filter((s) => s.length > 0);
    if (stops.length > 0) gen.stopSequences = stops;
  }
  if (req.seed !== undefined) gen.seed = req.seed;
  if (req.presence_penalty !== undefined) gen.presencePenalty = req.presence_penalty;
  if (req.frequency_penalty !== undefined) gen.frequencyPenalty = req.frequency_penalty;
  const format = req.response_format?.type;
  if (format === "json_object" || format === "json_schema") {
    gen.responseMimeType = "application/json";
    const schema = (req.response_format?.json_schema as { schema?: unknown } | undefined)?.schema;
    if (format === "json_schema" && schema !== undefined) gen.responseJsonSchema = schema;
  }
  const thinking = geminiThinkingConfig(req.model, req.reasoning_effort);
  if (thinking) gen.thinkingConfig = thinking;
  body.generationConfig = gen;

  if (req.tools && req.tools.length > 0) {
    body.tools = [
      {
        functionDeclarations: req.tools.map((t) => {
          const decl: Record<string, unknown> = { name: t.function.name };
          if (t.function.description !== undefined) decl.description = t.function.description;
          if (t.function.parameters !== undefined) decl.parameters = toGeminiSchema(t.function.parameters);
          return decl;
        }),
      },
    ];
    const toolConfig = toGeminiToolConfig(req.tool_choice);
    if (toolConfig) body.toolConfig = toolConfig;
  }
  return body;
}

/**
 * Gemini's `parameters` takes an OpenAPI-style subset of JSON Schema: keys it rejects
 * (`$schema`, `additionalProperties`, `$id`, `$comment`, `strict`) are removed recursively.
 */
export function toGeminiSchema(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(toGeminiSchema);
  if (typeof schema !== "object" || schema === null) return schema;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(schema)) {
    if (k === "$schema" || k === "additionalProperties" || k === "$id" || k === "$comment" || k === "strict") continue;
    // `properties` maps names to schemas: its keys are property names, not schema keywords.
    if (k === "properties" && typeof v === "object" && v !== null && !Array.isArray(v)) {
      out[k] = Object.fromEntries(Object.entries(v).map(([name, s]) => [name, toGeminiSchema(s)]));
    } else out[k] = toGeminiSchema(v);
  }
  return out;
}

function toGeminiParts(content: ChatMessage["content"]): GeminiWirePart[] {
  if (content === null) return [];
  if (typeof content === "string") return content.length > 0 ? [{ text: content }] : [];
  const out: GeminiWirePart[] = [];
  for (const p of content) {
    const part = toGeminiPart(p);
    if (part) out.push(part);
  }
  return out;
}

function toGeminiPart(p: ContentPart): GeminiWirePart | undefined {
  if (p.type === "text") return p.text.length > 0 ? { text: p.text } : undefined;
  const url = p.image_url.url;
  const data = /^data:([^;,]+);base64,(.*)$/s.exec(url);
  if (data) return { inlineData: { mimeType: data[1]!, data: data[2]! } };
  return { fileData: { mimeType: guessImageMime(url), fileUri: url } };
}

function guessImageMime(url: string): string {
  const ext = /\.(png|jpe?g|webp|gif|heic|heif)(?:[?#]|$)/i.exec(url)?.[1]?.toLowerCase();
  if (ext === "png") return "image/png";
  if (ext === "webp") return "image/webp";
  if (ext === "gif") return "image/gif";
  if (ext === "heic") return "image/heic";
  if (ext === "heif") return "image/heif";
  return "image/jpeg";
}

function toGeminiFunctionResponse(m: ChatMessage, toolNames: Map<string, string>): GeminiWirePart {
  const text =
    typeof m.content === "string"
      ? m.content
      : (m.content ?? []).map((p) => (p.type === "text" ? p.text : "")).join("");
  const name = toolNames.get(m.tool_call_id ?? "") ?? m.name ?? "tool";
  // A JSON object result is passed as the response Struct; anything else is wrapped.
  let response: Record<string, unknown> = { result: text };
  try {
    const v = JSON.parse(text);
    if (typeof v === "object" && v !== null && !Array.isArray(v)) response = v;
  } catch {
    // not JSON: keep { result: text }
  }
  return { functionResponse: { name, response } };
}

function parseArgs(args: string): Record<string, unknown> {
  try {
    const v = JSON.parse(args);
    return typeof v === "object" && v !== null && !Array.isArray(v) ? v : {};
  } catch {
    return {};
  }
}
