/**
 * Pure request normalization for the response cache: which parts of a request decide its
 * answer, their canonical JSON, and the hashes stored in `response_cache`. No I/O here.
 */
import { sha256Hex } from "../../lib/secrets";
import type { ChatMessage, ContentPart } from "../model/types";
import type { CacheableRequest } from "./types";

/**
 * Bumped whenever normalization changes, so entries hashed the old way simply stop matching
 * (they expire with their TTL) instead of answering a request they were not made for.
 */
const HASH_VERSION = "rc1";

/**
 * Request fields that do not change the answer. `stream` is here so a streaming and a
 * non-streaming request share entries; `responses` (a Responses client's own body, relayed to
 * OpenAI) says again what the messages and parameters say, so a Responses call and the same
 * chat call share entries; the others are bookkeeping the upstream never sees (or sees only
 * for its own analytics).
 */
const IGNORED_FIELDS = new Set([
  "model",
  "messages",
  "stream",
  "stream_options",
  "trace_id",
  "user",
  "metadata",
  "passthrough",
  "responses",
]);

/** JSON with object keys sorted at every depth; `undefined` members dropped (as JSON does). */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== "object") {
    // Numbers, strings, booleans as JSON writes them; undefined / functions → null in arrays.
    return JSON.stringify(value) ?? "null";
  }
  if (Array.isArray(value)) return "[" + value.map(canonicalJson).join(",") + "]";
  const keys = Object.keys(value as Record<string, unknown>)
    .filter((k) => (value as Record<string, unknown>)[k] !== undefined)
    .sort();
  return (
    "{" +
    keys.map((k) => JSON.stringify(k) + ":" + canonicalJson((value as Record<string, unknown>)[k])).join(",") +
    "}"
  );
}

/**
 * The answer-changing parameters of a request: every field except the model, the messages
 * and the ignored ones. `passthrough` members are flattened in (a client's unknown
 * parameter is still a parameter). A null parameter or an empty list (`tools: []`,
 * `stop: []`) means "the default", as if absent.
 */
export function answerParams(req: CacheableRequest): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const pass = req.passthrough;
  if (pass && typeof pass === "object" && !Array.isArray(pass)) {
    for (const [k, v] of Object.entries(pass as Record<string, unknown>)) {
      if (!IGNORED_FIELDS.has(k) && isSet(v)) out[k] = v;
    }
  }
  for (const [k, v] of Object.entries(req)) {
    if (!IGNORED_FIELDS.has(k) && isSet(v)) out[k] = v;
  }
  return out;
}

function isSet(v: unknown): boolean {
  return v != null && !(Array.isArray(v) && v.length === 0);
}

/**
 * A message as the cache compares it: role, name, content, tool calls and tool-call id.
 * `cache_control` markers are dropped (they steer the provider's prompt cache, not the
 * answer), and a content array holding a single text part equals the plain string.
 */
export function normalizeMessage(m: ChatMessage): Record<string, unknown> {
  return {
    role: m.role,
    name: m.name,
    content: normalizeContent(m.content),
    tool_calls: m.tool_calls?.length ? m.tool_calls : undefined,
    tool_call_id: m.tool_call_id,
  };
}

function normalizeContent(c: ChatMessage["content"]): unknown {
  if (!Array.isArray(c)) return c;
  const parts = c.map(stripCacheControl);
  const only = parts.length === 1 ? parts[0] : undefined;
  if (only && only.type === "text") return only.text;
  return parts;
}

function stripCacheControl(p: ContentPart): ContentPart {
  if (!("cache_control" in p)) return p;
  const { cache_control: _ignored, ...rest } = p;
  return rest as ContentPart;
}

/** SHA-256 (hex) of the normalized request: the `exact` mode's key within one API key. */
export function requestHash(req: CacheableRequest): string {
  return sha256Hex(
    HASH_VERSION +
      "\n" +
      canonicalJson({ model: req.model, messages: req.messages.map(normalizeMessage), params: answerParams(req) }),
  );
}

/** A single-turn request's parts: the optional system message and the user's text. */
export interface SingleTurn {
  system: ChatMessage | null;
  user: ChatMessage;
  /** The user's text, which is what gets embedded. */
  text: string;
}

/**
 * The semantic mode's precondition: at most one system message, then exactly one user
 * message with text only (no images), and no tools. Null when the request is not like that.
 * Earlier turns would make "the same question" depend on a conversation the embedding does
 * not see; tools make the answer depend on the tool set.
 */
export function singleTurn(req: CacheableRequest): SingleTurn | null {
  const tools = req.tools;
  if (Array.isArray(tools) ? tools.length > 0 : tools != null) return null;
  const msgs = req.messages;
  let system: ChatMessage | null = null;
  let user: ChatMessage;
  if (msgs.length === 1) user = msgs[0]!;
  else if (msgs.length === 2 && msgs[0]!.role === "system") {
    system = msgs[0]!;
    user = msgs[1]!;
  } else return null;
  if (user.role !== "user") return null;
  const text = textOf(user.content);
  if (text === null || text.trim() === "") return null;
  return { system, user, text };
}

/** Text of a content that holds text only; null when it has any other part. */
function textOf(c: ChatMessage["content"]): string | null {
  if (typeof c === "string") return c;
  if (!Array.isArray(c)) return null;
  const texts: string[] = [];
  for (const p of c) {
    if (p.type !== "text") return null;
    texts.push(p.text);
  }
  return texts.join("\n");
}

/**
 * SHA-256 (hex) of what a semantic match must share exactly: the answer-changing
 * parameters and the system message (a different system prompt is a different question).
 * The model is a column of its own. The user message's `name` is included too.
 */
export function paramHash(req: CacheableRequest): string {
  const turn = singleTurn(req);
  return sha256Hex(
    HASH_VERSION +
      "\n" +
      canonicalJson({
        params: answerParams(req),
        system: turn?.system ? normalizeMessage(turn.system) : null,
        user_name: turn?.user.name,
      }),
  );
}

/**
 * Whether a request may use the cache at all: a request for several choices (`n` > 1)
 * has an answer the stored single choice cannot reproduce.
 */
export function isCacheable(req: CacheableRequest): boolean {
  const n = req.n ?? (req.passthrough as Record<string, unknown> | undefined)?.n;
  return n == null || n === 1;
}

/** Cosine similarity; 0 for vectors of different length or a zero vector. */
export function cosine(a: ArrayLike<number>, b: ArrayLike<number>): number {
  if (a.length !== b.length || a.length === 0) return 0;
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    const x = a[i]!;
    const y = b[i]!;
    dot += x * y;
    na += x * x;
    nb += y * y;
  }
  return na === 0 || nb === 0 ? 0 : dot / Math.sqrt(na * nb);
}

/** The best candidate at or above `threshold`, or null. */
export function bestMatch<T extends { embedding: ArrayLike<number> }>(
  query: ArrayLike<number>,
  candidates: T[],
  threshold: number,
): { item: T; similarity: number } | null {
  let best: { item: T; similarity: number } | null = null;
  for (const c of candidates) {
    const s = cosine(query, c.embedding);
    if (s >= threshold && (!best || s > best.similarity)) best = { item: c, similarity: s };
  }
  return best;
}
