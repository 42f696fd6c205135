/**
 * `cascade`: the pure parts. `checkResponse` decides whether a tier's answer is acceptable
 * (config.response_check); `judgeRequest` and `parseVerdict` are the optional judge model's
 * prompt and the reading of its verdict.
 */
import type { ChatMessage, ChatRequest, ChatResult } from "../model/types";
import type { ResponseCheck } from "./config-schema";

/** Why an answer was refused, in the header's words. */
export type CheckFailure = "empty" | "refusal" | "truncated" | "invalid_json" | "too_short" | "missing_text";

// Openings of refusals, English and Korean; looked for only near the start of a short answer.
const REFUSALS = [
  /\bi(?:'m| am) sorry,? but i (?:can(?:'|no)t|won't|am unable|'m unable)/i,
  /\bi (?:can(?:'|no)t|won't|am unable to|'m unable to|am not able to|'m not able to) (?:help|assist|comply|do that|provide|answer|fulfil)/i,
  /\bas an ai(?: language model)?,? i (?:can(?:'|no)t|don't|do not)/i,
  /(?:죄송하지만|죄송합니다만|유감이지만).{0,40}(?:수 없|어렵습니다)/,
  /(?:도와드릴|답변드릴|답변해 드릴|제공해 드릴|제공할|도와줄) 수 없/,
];
const REFUSAL_WINDOW = 300;
const REFUSAL_MAX_LENGTH = 1000;

/** Whether the request asked for a JSON answer. */
export function wantsJson(req: Pick<ChatRequest, "response_format">): boolean {
  const t = req.response_format?.type;
  return t === "json_object" || t === "json_schema";
}

/** The first reason `result` fails the check, or null when it passes. Defaults: every check on. */
export function checkResponse(
  result: ChatResult,
  req: Pick<ChatRequest, "response_format">,
  check: ResponseCheck = {},
): CheckFailure | null {
  const text = result.content ?? "";
  const trimmed = text.trim();
  const hasTools = (result.toolCalls?.length ?? 0) > 0;
  if ((check.empty ?? true) && !trimmed && !hasTools) return "empty";
  if ((check.truncated ?? true) && result.finishReason === "length") return "truncated";
  if ((check.refusal ?? true) && !hasTools && isRefusal(trimmed)) return "refusal";
  if ((check.invalid_json ?? true) && wantsJson(req) && !hasTools && !isJson(trimmed)) return "invalid_json";
  if (check.min_chars && !hasTools && trimmed.length < check.min_chars) return "too_short";
  if (check.must_include?.length && !hasTools) {
    const lower = text.toLowerCase();
    if (!check.must_include.every((s) => lower.includes(s.toLowerCase()))) return "missing_text";
  }
  return null;
}

export function isRefusal(text: string): boolean {
  if (!text || text.length > REFUSAL_MAX_LENGTH) return false;
  const head = text.slice(0, REFUSAL_WINDOW);
  return REFUSALS.some((re) => re.test(head));
}

/** JSON after stripping one optional Markdown code fence. */
export function isJson(text: string): boolean {
  const fenced = /^```(?:json)?\s*([\s\S]*?)\s*```$/i.exec(text);
  const body = fenced ? fenced[1]! : text;
  if (!body.startsWith("{") && !body.startsWith("[")) return false;
  try {
    JSON.parse(body);
    return true;
  } catch {
    return false;
  }
}

export const JUDGE_MAX_TOKENS = 64;
const JUDGE_SYSTEM =
  "You grade whether an assistant's answer fully and correctly satisfies the user's request. " +
  "Reply with one word on the first line: PASS if the answer is correct, complete and on-topic, FAIL otherwise. " +
  "You may add one short sentence of reason on the next line.";

/**
 * The judge's request: the answer first, then the request it answers (the answer is what is
 * graded; the request is context).
 */
export function judgeRequest(question: readonly ChatMessage[], answer: ChatResult): Omit<ChatRequest, "model"> {
  const asked = lastUserText(question);
  const given =
    answer.content?.trim() ||
    (answer.toolCalls?.length
      ? `(tool calls: ${answer.toolCalls.map((t) => `${t.function.name}(${t.function.arguments})`).join(", ")})`
      : "(empty)");
  return {
    messages: [
      { role: "system", content: JUDGE_SYSTEM },
      { role: "user", content: `Answer:\n${given}\n\nRequest:\n${asked}` },
    ],
    max_tokens: JUDGE_MAX_TOKENS,
    temperature: 0,
  };
}

/** PASS / FAIL from the judge's reply (the first of the two words); null when it said neither. */
export function parseVerdict(reply: string | null): "pass" | "fail" | null {
  const m = /\b(PASS|FAIL)\b/i.exec(reply ?? "");
  return m ? (m[1]!.toUpperCase() === "PASS" ? "pass" : "fail") : null;
}

export function lastUserText(messages: readonly ChatMessage[]): string {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i]!;
    if (m.role !== "user") continue;
    if (typeof m.content === "string") return m.content;
    if (Array.isArray(m.content)) return m.content.flatMap((p) => (p.type === "text" ? [p.text] : [])).join("\n");
    return "";
  }
  return "";
}
