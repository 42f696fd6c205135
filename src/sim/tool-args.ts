/**
 * Sample tool-call arguments (and structured-output answers) from a JSON schema: required
 * properties filled with a plain value of their type, so a tool call or a
 * schema-constrained reply always parses and validates. Local `$ref`s (`#`, `#/$defs/…`,
 * `#/definitions/…`) are followed. Gemini's OpenAPI-style schemas (`type: "STRING"`) are
 * read the same way. Tool calls also get harmless values for the properties real agents
 * act on (agent-values.ts): a shell command that only echoes, a path the user named.
 */
import { agentValue } from "./agent-values.ts";

type Schema = {
  type?: string | string[];
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  enum?: unknown[];
  const?: unknown;
  default?: unknown;
  anyOf?: Schema[];
  oneOf?: Schema[];
  allOf?: Schema[];
  format?: string;
  minimum?: number;
  minItems?: number;
  minLength?: number;
  $ref?: string;
};

/** A deterministic value that satisfies `schema` (as far as type, enum and const go). */
export function sampleFromSchema(schema: unknown, name = "value"): unknown {
  return sample(schema, name, 0, { root: schema });
}

/**
 * Arguments for a tool call: the schema's sample, with agent-friendly values for commands,
 * paths, patterns and queries (taken from the user's text where it names them).
 */
export function sampleToolArgs(schema: unknown, userText: string): unknown {
  return sample(schema ?? { type: "object" }, "value", 0, { root: schema, userText });
}

interface SampleContext {
  root: unknown;
  /** Set for tool calls: enables agent values (agent-values.ts). */
  userText?: string;
}

function sample(schema: unknown, name: string, depth: number, ctx: SampleContext): unknown {
  if (typeof schema !== "object" || schema === null || depth > 8) return null;
  const s = schema as Schema;
  if (typeof s.$ref === "string") return sample(resolveRef(ctx.root, s.$ref), name, depth + 1, ctx);
  if (s.const !== undefined) return s.const;
  if (Array.isArray(s.enum) && s.enum.length > 0) return s.enum[0];
  if (s.default !== undefined) return s.default;
  const alternative = s.anyOf ?? s.oneOf ?? s.allOf;
  if (Array.isArray(alternative) && alternative.length > 0) {
    const pick = alternative.find((a) => typeOf(a) !== "null") ?? alternative[0];
    return sample(pick, name, depth + 1, ctx);
  }
  const type = typeOf(s);
  if (ctx.userText !== undefined && depth > 0 && (type === "string" || type === "array")) {
    const itemsAreStrings = type === "array" && typeOf(s.items ?? { type: "string" }) === "string";
    const value = agentValue(name, type === "string" ? "string" : itemsAreStrings ? "strings" : "other", ctx.userText);
    if (value !== undefined) return value;
  }
  switch (type) {
    case "object":
      return sampleObject(s, depth, ctx);
    case "array": {
      // Deep in a recursive schema an optional array stays empty, so the sample ends.
      const count = Math.max(depth > 4 ? 0 : 1, s.minItems ?? 0);
      return Array.from({ length: count }, () => sample(s.items ?? { type: "string" }, name, depth + 1, ctx));
    }
    case "string": {
      const text = sampleString(s.format, name);
      return s.minLength !== undefined && text.length < s.minLength ? text.padEnd(s.minLength, "x") : text;
    }
    case "integer":
      return Math.max(1, Math.ceil(s.minimum ?? 1));
    case "number":
      return Math.max(1.5, s.minimum ?? 1.5);
    case "boolean":
      return true;
    case "null":
      return null;
    default:
      return s.properties ? sampleObject(s, depth, ctx) : `sample ${name}`;
  }
}

/** The schema a local JSON pointer names (`#`, `#/$defs/x`), or undefined. */
function resolveRef(root: unknown, ref: string): unknown {
  if (!ref.startsWith("#")) return undefined;
  let node = root;
  for (const raw of ref.slice(1).split("/").filter(Boolean)) {
    const key = decodeURIComponent(raw).replace(/~1/g, "/").replace(/~0/g, "~");
    node = typeof node === "object" && node !== null ? (node as Record<string, unknown>)[key] : undefined;
  }
  return node;
}

function sampleObject(s: Schema, depth: number, ctx: SampleContext): Record<string, unknown> {
  const props = s.properties ?? {};
  // Required properties only; a schema that marks none gets all of them, so the call is
  // not an empty object the caller cannot tell from "no arguments".
  const keys = Array.isArray(s.required) ? s.required : Object.keys(props);
  const out: Record<string, unknown> = {};
  for (const key of keys) out[key] = sample(props[key] ?? { type: "string" }, key, depth + 1, ctx);
  return out;
}

function typeOf(s: unknown): string | undefined {
  if (typeof s !== "object" || s === null) return undefined;
  const t = (s as Schema).type;
  const one = Array.isArray(t) ? (t.find((x) => String(x).toLowerCase() !== "null") ?? t[0]) : t;
  return typeof one === "string" ? one.toLowerCase() : undefined;
}

function sampleString(format: string | undefined, name: string): string {
  switch (format) {
    case "date-time":
      return "2026-01-01T00:00:00Z";
    case "date":
      return "2026-01-01";
    case "email":
      return "sample@example.com";
    case "uri":
    case "url":
      return "https://example.com/";
    case "uuid":
      return "00000000-0000-4000-8000-000000000000";
    default:
      return `sample ${name}`;
  }
}
