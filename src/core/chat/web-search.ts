/**
 * The web plugin (`plugins: [{ id: "web", ... }]`): before the model call, a web search for the
 * user's last message; the top results go into the prompt as a system message with numbered
 * sources, and the answer carries them as `url_citation` annotations.
 */
import { GatewayError, issue, text, ValidationFailure, type ValidationIssue } from "../errors";
import type { ChatMessage } from "../model/types";
import { asUpstreamError } from "../upstream/error";
import { upstreamClientError, type FailureMessages } from "../upstream/client-error";
import { logUpstreamFailure } from "../upstream/words";

export interface SearchResult {
  title: string;
  url: string;
  description: string;
}

/** The search port: one real search API's adapter (Brave) implements it. */
export interface SearchProvider {
  readonly id: string;
  search(query: string, count: number, signal?: AbortSignal): Promise<SearchResult[]>;
}

export interface WebPluginOptions {
  maxResults: number;
  searchPrompt: string;
  /** When true a failed search does not fail the call: it goes on without results. */
  optional: boolean;
}

export const DEFAULT_SEARCH_PROMPT =
  "Web search results for the user's question follow. Use them when relevant and cite them by their number in square brackets, e.g. [1].";

/** An OpenAI-style citation of one source. */
export interface UrlCitation {
  url: string;
  title: string;
  start_index: number;
  end_index: number;
}

/**
 * Reads the plugin list: `web` with `max_results` (1–10, default 5), `search_prompt` (string,
 * ≤ 4,000 characters) and `optional` (boolean, default false); any other id is 400.
 */
export function parseWebPlugin(
  plugins: readonly { id: string; [k: string]: unknown }[] | undefined,
): WebPluginOptions | null {
  if (!plugins?.length) return null;
  let found: WebPluginOptions | null = null;
  const issues: ValidationIssue[] = [];
  plugins.forEach((p, i) => {
    if (p.id !== "web")
      throw new GatewayError(
        "unknown_plugin",
        text(
          `알 수 없는 플러그인입니다: '${p.id}'. 사용 가능한 플러그인: web.`,
          `Unknown plugin: '${p.id}'. Available plugins: web.`,
        ),
      );
    const max = p.max_results ?? 5;
    if (typeof max !== "number" || !Number.isInteger(max) || max < 1 || max > 10)
      issues.push(
        issue(
          ["body", "plugins", i, "max_results"],
          text("max_results는 1부터 10까지의 정수여야 합니다.", "max_results must be an integer from 1 to 10"),
          "range",
        ),
      );
    const prompt = p.search_prompt ?? DEFAULT_SEARCH_PROMPT;
    if (typeof prompt !== "string" || prompt.length > 4000)
      issues.push(
        issue(
          ["body", "plugins", i, "search_prompt"],
          text(
            "search_prompt는 최대 4000자의 문자열이어야 합니다.",
            "search_prompt must be a string of at most 4000 characters",
          ),
          "string",
        ),
      );
    const optional = p.optional ?? false;
    if (typeof optional !== "boolean")
      issues.push(
        issue(
          ["body", "plugins", i, "optional"],
          text("optional은 true 또는 false여야 합니다.", "optional must be a boolean"),
          "boolean",
        ),
      );
    found = { maxResults: max as number, searchPrompt: prompt as string, optional: optional as boolean };
  });
  if (issues.length) throw new ValidationFailure(issues);
  return found;
}

/** The text of the last user message: the search query. */
export function lastUserText(messages: readonly ChatMessage[]): string {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i]!;
    if (m.role !== "user") continue;
    if (typeof m.content === "string") return m.content;
    if (Array.isArray(m.content)) return m.content.map((p) => (p.type === "text" ? p.text : "")).join(" ");
  }
  return "";
}

/** The system message with numbered sources, placed right before the last user message. */
export function withSearchResults(
  messages: readonly ChatMessage[],
  results: readonly SearchResult[],
  prompt: string,
): ChatMessage[] {
  if (!results.length) return [...messages];
  const body = results.map((r, i) => `[${i + 1}] ${r.title}\n${r.url}\n${r.description}`).join("\n\n");
  const sys: ChatMessage = { role: "system", content: `${prompt}\n\n${body}` };
  let at = messages.length;
  for (let i = messages.length - 1; i >= 0; i--)
    if (messages[i]!.role === "user") {
      at = i;
      break;
    }
  return [...messages.slice(0, at), sys, ...messages.slice(at)];
}

/**
 * One citation per source, in source order. Where the answer cites `[n]`, the citation spans
 * that marker; a source the answer does not cite spans nothing at the end of the text.
 */
export function citationsFor(content: string | null, results: readonly SearchResult[]): UrlCitation[] {
  const text = content ?? "";
  return results.map((r, i) => {
    const marker = `[${i + 1}]`;
    const at = text.indexOf(marker);
    return at >= 0
      ? { url: r.url, title: r.title, start_index: at, end_index: at + marker.length }
      : { url: r.url, title: r.title, start_index: text.length, end_index: text.length };
  });
}

/**
 * A failed search as the client sees it: a rate limit (429), a refusal (502, our words for it)
 * or a transient failure (502); what the search engine said goes to the log.
 */
export function searchFailure(e: unknown, providerId: string, requestId: string): GatewayError {
  const err = asUpstreamError(e);
  logUpstreamFailure(err, { request_id: requestId, provider: providerId });
  return upstreamClientError(err, [providerId], SEARCH_FAILURE);
}

const SEARCH_FAILURE: FailureMessages = {
  rateLimited: text("웹 검색 제공자가 요청 한도에 도달했습니다.", "The web search provider reached its rate limit."),
  rejected: text("웹 검색 제공자가 요청을 거부했습니다.", "The web search provider rejected the request."),
  unavailable: text("웹 검색에 실패했습니다.", "The web search failed."),
};
