/**
 * A response_format JSON schema → the schema Anthropic's native structured output
 * (`output_config.format`) accepts, or undefined when it cannot take it.
 *
 * Anthropic compiles the schema into a grammar and accepts a subset of JSON Schema: every
 * object closed (`additionalProperties: false`), no numeric or length bounds, `minItems` 0 or
 * 1, simple regexes, a fixed list of string formats, no recursion, at most 24 optional
 * properties and 16 unions. The adaptation keeps every answer valid for the caller's schema
 * wherever it can:
 * - an object with `properties` and open additional properties is closed (a narrower schema:
 *   its answers still validate against the original);
 * - bounds, unsupported formats and complex patterns move into the `description`, as
 *   Anthropic's own SDKs do: the model reads them, the grammar does not enforce them;
 * - what cannot be narrowed without losing its meaning — a map (`additionalProperties` as a
 *   schema, `patternProperties`), a free-form object, an `enum` of objects or arrays, recursion, an external `$ref`, too many optional properties
 *   or unions — makes the whole schema unsuitable (the caller takes the forced-tool path).
 */

type Json = Record<string, unknown>;

const MOVED_TO_DESCRIPTION = [
  "minimum",
  "maximum",
  "exclusiveMinimum",
  "exclusiveMaximum",
  "multipleOf",
  "minLength",
  "maxLength",
  "maxItems",
  "uniqueItems",
  "minProperties",
  "maxProperties",
];
const FORMATS = new Set(["date-time", "time", "date", "duration", "email", "hostname", "uri", "ipv4", "ipv6", "uuid"]);
// Lookaround, backreferences and word boundaries are outside Anthropic's regex subset.
const COMPLEX_PATTERN = /\(\?[=!<]|\\[bB1-9]/;
const MAX_OPTIONAL = 24;
const MAX_UNIONS = 16;

interface Walk {
  optional: number;
  unions: number;
  ok: boolean;
}

export function toAnthropicNativeSchema(schema: unknown): Json | undefined {
  if (!isObject(schema) || hasRecursion(schema)) return undefined;
  const walk: Walk = { optional: 0, unions: 0, ok: true };
  const out = adapt(schema, walk) as Json;
  delete out.$schema;
  return walk.ok && walk.optional <= MAX_OPTIONAL && walk.unions <= MAX_UNIONS ? out : undefined;
}

const SCHEMA_MAPS = new Set(["properties", "$defs", "definitions"]);
const SUBSCHEMAS = new Set([
  "items",
  "prefixItems",
  "anyOf",
  "oneOf",
  "allOf",
  "not",
  "additionalProperties",
  "if",
  "then",
  "else",
]);

/** One schema node: subschemas adapted, keywords outside the subset moved or flagged. */
function adapt(node: unknown, walk: Walk): unknown {
  if (Array.isArray(node)) return node.map((n) => adapt(n, walk));
  if (!isObject(node)) return node;
  const out: Json = {};
  const notes: string[] = [];
  for (const [key, value] of Object.entries(node)) {
    if ((key === "$ref" && typeof value === "string" && !value.startsWith("#")) || key === "patternProperties")
      walk.ok = false;
    if (key === "enum" && Array.isArray(value) && value.some((v) => typeof v === "object" && v !== null))
      walk.ok = false;
    if (MOVED_TO_DESCRIPTION.includes(key) || (key === "minItems" && typeof value === "number" && value > 1))
      notes.push(`${key}: ${JSON.stringify(value)}`);
    else if (key === "format" && typeof value === "string" && !FORMATS.has(value)) notes.push(`format: ${value}`);
    else if (key === "pattern" && typeof value === "string" && COMPLEX_PATTERN.test(value))
      notes.push(`pattern: ${value}`);
    else if (SCHEMA_MAPS.has(key) && isObject(value))
      out[key] = Object.fromEntries(Object.entries(value).map(([k, v]) => [k, adapt(v, walk)]));
    else if (SUBSCHEMAS.has(key)) out[key] = adapt(value, walk);
    else out[key] = value;
  }
  if (Array.isArray(node.anyOf) || Array.isArray(node.oneOf) || Array.isArray(node.type)) walk.unions++;
  if (Array.isArray(node.oneOf)) {
    // oneOf is not in the subset; anyOf accepts every answer oneOf does (and a few more).
    out.anyOf = out.oneOf;
    delete out.oneOf;
  }
  if (node.type === "object" || isObject(node.properties)) closeObject(node, out, walk);
  if (notes.length > 0)
    out.description = [node.description, `(${notes.join(", ")})`].filter((d) => typeof d === "string" && d).join(" ");
  return out;
}

function closeObject(node: Json, out: Json, walk: Walk): void {
  const extra = node.additionalProperties;
  if (!isObject(node.properties) || (extra !== undefined && typeof extra !== "boolean")) {
    walk.ok = false;
    return;
  }
  out.additionalProperties = false;
  const required = Array.isArray(node.required) ? node.required : [];
  walk.optional += Object.keys(node.properties).filter((k) => !required.includes(k)).length;
}

/** A `$ref` to the root, or a `$defs` / `definitions` entry that reaches itself. */
function hasRecursion(root: Json): boolean {
  const defs: Record<string, unknown> = {
    ...(isObject(root.definitions) ? root.definitions : {}),
    ...(isObject(root.$defs) ? root.$defs : {}),
  };
  const refsOf = (node: unknown, into: Set<string>): Set<string> => {
    if (Array.isArray(node)) node.forEach((n) => refsOf(n, into));
    else if (isObject(node)) {
      for (const [key, value] of Object.entries(node)) {
        if (key === "$ref" && typeof value === "string") into.add(value === "#" ? "#" : (value.split("/").pop() ?? ""));
        else refsOf(value, into);
      }
    }
    return into;
  };
  const { $defs: _d, definitions: _e, ...body } = root;
  if (refsOf(body, new Set()).has("#")) return true;
  const graph = new Map(Object.entries(defs).map(([name, def]) => [name, refsOf(def, new Set())]));
  const reaches = (from: string, target: string, seen: Set<string>): boolean => {
    for (const next of graph.get(from) ?? []) {
      if (next === "#" || next === target) return true;
      if (!seen.has(next)) {
        seen.add(next);
        if (reaches(next, target, seen)) return true;
      }
    }
    return false;
  };
  return [...graph.keys()].some((name) => reaches(name, name, new Set()));
}

function isObject(v: unknown): v is Json {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}
