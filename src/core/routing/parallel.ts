/**
 * `parallel`: the pure parts. Whether a request fans out, and the synthesis model's request
 * that merges the workers' answers into one.
 */
import type { ChatRequest, ChatResult } from "../model/types";
import type { Category } from "./classify";

const SYNTHESIS_SYSTEM =
  "Several assistants answered the same request independently. Write the single best final answer to the request: " +
  "keep what is correct and useful in each, resolve disagreements in favour of what is best supported, drop mistakes. " +
  "Answer the user directly; do not mention the candidates or this merge.";

/** Fan out when the category is deep (every category when `deep` is unset) and no tools are involved. */
export function shouldFanOut(
  category: Category,
  deep: readonly Category[] | undefined,
  req: Pick<ChatRequest, "tools">,
): boolean {
  if (req.tools?.length) return false; // tool calls cannot be merged meaningfully
  return deep === undefined || deep.includes(category);
}

/**
 * The merge request: the conversation so far, with the last user message rewritten to carry the
 * candidate answers first and the original request after them.
 */
export function synthesisRequest(
  original: Omit<ChatRequest, "model">,
  answers: readonly ChatResult[],
  instructions?: string,
): Omit<ChatRequest, "model"> {
  const listed = answers.map((a, i) => `[${i + 1}] ${a.content?.trim() ?? ""}`).join("\n\n");
  const messages = [...original.messages];
  let last = -1;
  for (let i = messages.length - 1; i >= 0; i--) {
    if (messages[i]!.role === "user") {
      last = i;
      break;
    }
  }
  const asked = last >= 0 ? textOf(messages[last]!.content) : "";
  const merged = { role: "user" as const, content: `Candidate answers:\n${listed}\n\nRequest:\n${asked}` };
  if (last >= 0) messages[last] = merged;
  else messages.push(merged);
  // The client's own Anthropic or Responses body (`anthropic`, `responses`) would send the original conversation instead.
  const { tools: _t, tool_choice: _c, parallel_tool_calls: _p, anthropic: _a, responses: _r, ...rest } = original;
  return {
    ...rest,
    messages: [
      { role: "system", content: instructions ? `${SYNTHESIS_SYSTEM}\n\n${instructions}` : SYNTHESIS_SYSTEM },
      ...messages,
    ],
  };
}

/** Extra prompt tokens the merge adds per answer and overall (labels, instructions), for the hold. */
export const SYNTHESIS_OVERHEAD_TOKENS = { perAnswer: 8, fixed: 120 };

function textOf(content: ChatRequest["messages"][number]["content"]): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content.flatMap((p) => (p.type === "text" ? [p.text] : [])).join("\n");
}
