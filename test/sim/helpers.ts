/**
 * Shared test helpers for the simulator: HTTP calls over real sockets, a minimal SSE
 * splitter (independent of the gateway's decoder, so the two cannot share a bug), vendor
 * fixture loading and a structural comparison with those fixtures.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";

const FIXTURES = join(import.meta.dir, "..", "fixtures", "sim");

export const OPENAI_AUTH = { authorization: "Bearer sk-test" };
export const ANTHROPIC_AUTH = { "x-api-key": "sk-ant-test", "anthropic-version": "2023-06-01" };
export const GEMINI_AUTH = { "x-goog-api-key": "AIza-test" };

export function fixtureText(vendor: string, name: string): string {
  return readFileSync(join(FIXTURES, vendor, name), "utf8");
}

export function fixtureJson<T = any>(vendor: string, name: string): T {
  return JSON.parse(fixtureText(vendor, name)) as T;
}

/** A recorded `.http` response: status, lower-cased headers, parsed JSON body. */
export function fixtureHttp(
  vendor: string,
  name: string,
): { status: number; headers: Record<string, string>; body: any } {
  const text = fixtureText(vendor, name).replace(/\r\n/g, "\n");
  const split = text.indexOf("\n\n");
  const [statusLine, ...headerLines] = text.slice(0, split).split("\n");
  const headers: Record<string, string> = {};
  for (const line of headerLines) {
    const colon = line.indexOf(":");
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  return { status: Number(statusLine!.split(" ")[1]), headers, body: JSON.parse(text.slice(split + 2)) };
}

/** A Response whose `json()` is untyped: tests assert on wire bodies field by field. */
export type JsonResponse = Omit<Response, "json"> & { json(): Promise<any> };

export async function postJson(
  url: string,
  body: unknown,
  headers: Record<string, string> = {},
  init: RequestInit = {},
): Promise<JsonResponse> {
  return fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
    ...init,
  });
}

export interface SseEvent {
  event?: string;
  data: string;
}

/**
 * Splits an event-stream body into events, checking the framing: `separator` is the exact
 * blank-line separator the vendor uses ("\n\n" or "\r\n\r\n").
 */
export function parseSse(text: string, separator = "\n\n"): SseEvent[] {
  if (!text.endsWith(separator)) throw new Error(`stream does not end with ${JSON.stringify(separator)}`);
  const eol = separator.slice(0, separator.length / 2);
  return text
    .slice(0, -separator.length)
    .split(separator)
    .map((block) => {
      const ev: SseEvent = { data: "" };
      for (const line of block.split(eol)) {
        if (line.startsWith("event: ")) ev.event = line.slice(7);
        else if (line.startsWith("data: ")) ev.data += line.slice(6);
        else throw new Error(`unexpected line ${JSON.stringify(line)}`);
      }
      return ev;
    });
}

/**
 * Where `actual` differs in structure from the recorded `expected`: keys missing, types
 * that differ, or keys in another order. Values are not compared. `ignore` lists keys the
 * simulator deliberately leaves out (e.g. OpenAI's `obfuscation` padding).
 */
export function structuralDiff(expected: unknown, actual: unknown, ignore: string[] = [], path = "$"): string[] {
  const kind = (v: unknown) => (v === null ? "null" : Array.isArray(v) ? "array" : typeof v);
  if (kind(expected) !== kind(actual)) {
    // A nullable field may be null in one capture and set in the other.
    if (kind(expected) === "null" || kind(actual) === "null") return [];
    return [`${path}: expected ${kind(expected)}, got ${kind(actual)}`];
  }
  if (Array.isArray(expected)) {
    const a = actual as unknown[];
    if (expected.length === 0 || a.length === 0) return [];
    return structuralDiff(expected[0], a[0], ignore, `${path}[0]`);
  }
  if (kind(expected) !== "object") return [];
  const e = expected as Record<string, unknown>;
  const a = actual as Record<string, unknown>;
  const diffs: string[] = [];
  const keys = Object.keys(e).filter((k) => !ignore.includes(k));
  for (const k of keys) {
    if (!(k in a)) diffs.push(`${path}.${k}: missing`);
    else diffs.push(...structuralDiff(e[k], a[k], ignore, `${path}.${k}`));
  }
  const order = Object.keys(a).filter((k) => keys.includes(k));
  const expectedOrder = keys.filter((k) => k in a);
  if (order.join() !== expectedOrder.join())
    diffs.push(`${path}: key order ${order.join()} != ${expectedOrder.join()}`);
  return diffs;
}

/** Reads a streaming body to its end, or to the error that broke it off. */
export async function getJson(url: string, init: RequestInit = {}): Promise<JsonResponse> {
  return fetch(url, init);
}

export async function readUntilBreak(res: JsonResponse): Promise<{ text: string; error?: unknown }> {
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let text = "";
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return { text };
      text += decoder.decode(value, { stream: true });
    }
  } catch (error) {
    return { text, error };
  }
}

/** A long text of exactly `tokens` tokens (4 characters each). */
export function textOfLength(tokens: number, seed = "x"): string {
  return `${seed} `.repeat(tokens * 2).slice(0, tokens * 4);
}
