/**
 * `response_format` on Anthropic, which has no JSON mode of its own. Two paths:
 *
 * - **native**: `output_config.format: {type: "json_schema", schema}` (generally available,
 *   no beta header) on the models that take it — Claude Sonnet / Opus / Haiku 4.5 and later —
 *   for a `json_schema` whose schema fits Anthropic's subset (see native-schema.ts). The
 *   answer is an ordinary text block holding the JSON; thinking stays allowed.
 * - **tool**: everything else (`json_object`, older models, schemas outside the subset): a
 *   tool `json_response` whose `input_schema` is the schema (`{type: "object"}` for
 *   `json_object`), forced with `tool_choice: {type: "tool"}` — or `{type: "any"}` when the
 *   caller's own tools may be called instead. The tool's input becomes the message content
 *   and its `tool_use` stop reason `stop` (response.ts, stream.ts).
 *
 * A request that forces one of the caller's tools keeps it: its answer is that tool call.
 * A schema whose root is not an object cannot be a tool's input and always goes native.
 */
import type { ChatRequest } from "../../core/model/types";
import { toAnthropicNativeSchema } from "./native-schema";

type Json = Record<string, unknown>;

export type AnthropicStructuredOutput =
  | { path: "native"; format: { type: "json_schema"; schema: Json } }
  | { path: "tool"; tool: { name: string; description: string; input_schema: Json }; toolChoice: Json };

export const ANTHROPIC_JSON_TOOL = "json_response";

/** The path a request's response_format takes, or undefined when it asks for no JSON. Pure. */
export function anthropicStructuredOutput(req: ChatRequest): AnthropicStructuredOutput | undefined {
  const type = req.response_format?.type;
  if (type !== "json_object" && type !== "json_schema") return undefined;
  if (req.tool_choice === "required" || typeof req.tool_choice === "object") return undefined;
  const spec = (isObject(req.response_format?.json_schema) ? req.response_format.json_schema : {}) as {
    name?: unknown;
    description?: unknown;
    schema?: unknown;
  };
  const schema = type === "json_schema" && isObject(spec.schema) ? spec.schema : undefined;

  if (schema) {
    const native = anthropicHasNativeJson(req.model) ? toAnthropicNativeSchema(schema) : undefined;
    if (native) return { path: "native", format: { type: "json_schema", schema: native } };
    if (!hasObjectRoot(schema)) return { path: "native", format: { type: "json_schema", schema: withoutMeta(schema) } };
  }

  const taken = new Set((req.tools ?? []).map((t) => t.function.name));
  let name = ANTHROPIC_JSON_TOOL;
  while (taken.has(name)) name += "_";
  const label = typeof spec.name === "string" ? ` "${spec.name}"` : "";
  const description =
    typeof spec.description === "string" && spec.description
      ? spec.description
      : schema
        ? `Give your answer as this tool's input: JSON matching the${label} schema.`
        : "Give your answer as this tool's input: one JSON object.";
  const input_schema = schema ? withoutMeta(schema) : { type: "object" };
  // The caller's own tools stay callable unless the caller said `none`.
  const toolChoice: Json = taken.size > 0 && req.tool_choice !== "none" ? { type: "any" } : { type: "tool", name };
  if (req.parallel_tool_calls === false) toolChoice.disable_parallel_tool_use = true;
  return { path: "tool", tool: { name, description, input_schema }, toolChoice };
}

/** The forced tool's name when the request takes the tool path (what the answer must unwrap). */
export function anthropicJsonTool(req: ChatRequest): string | undefined {
  const plan = anthropicStructuredOutput(req);
  return plan?.path === "tool" ? plan.tool.name : undefined;
}

/**
 * Models with native structured output: Claude Opus, Sonnet and Haiku from version 4.5 on
 * (`claude-sonnet-4-5`, `claude-haiku-4-5-20251001`, `claude-opus-4-6`, ...). Older ones
 * (`claude-opus-4-1`, `claude-sonnet-4-20250514`, `claude-3-5-sonnet-…`) and unknown names
 * take the forced tool, which every Claude model supports.
 */
export function anthropicHasNativeJson(model: string): boolean {
  const m = /claude-(?:opus|sonnet|haiku)-(\d+)(?:-(\d{1,2})(?=$|[-@]))?/.exec(model);
  if (!m) return false;
  const major = Number(m[1]);
  const minor = m[2] === undefined ? 0 : Number(m[2]);
  return major > 4 || (major === 4 && minor >= 5);
}

function hasObjectRoot(schema: Json): boolean {
  return schema.type === "object" || (schema.type === undefined && isObject(schema.properties));
}

function withoutMeta(schema: Json): Json {
  const { $schema: _, ...rest } = schema;
  return rest;
}

function isObject(v: unknown): v is Json {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}
