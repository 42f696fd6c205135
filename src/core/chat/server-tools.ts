/**
 * Anthropic's server tools in a Messages client's own body, which the gateway relays to Claude
 * as is: what they may cost is held, and what cannot be priced is refused before any hold.
 *
 * - `web_search_*`: each search at the catalog's `web_search_per_1k`, and its results as input
 *   tokens; held for `max_uses` searches (10 without it: Anthropic's server loop pauses the
 *   turn, `pause_turn`, after 10 iterations).
 * - `web_fetch_*`: free but for its content's input tokens; held for `max_uses` fetches (10
 *   without it) of `max_content_tokens` each (a whole context window without it).
 * - Anthropic's client-executed tools (`bash_*`, `text_editor_*`, `computer_*`, `memory_*`)
 *   run at the client: only their definition's tokens, as a custom tool's.
 * - Anything else with a `type` (code execution, whose price is container time no answer
 *   reports; tool search; a type Anthropic adds later) and `mcp_servers` (tools of servers the
 *   gateway cannot see) cannot be priced: 400 `unsupported_parameter` when the body would be
 *   relayed (an Anthropic candidate); a translation for another provider drops them.
 *
 * Every search or fetch puts its result in the context, and Claude reads the context again
 * after each one: the hold counts every iteration at its largest (the prompt, plus every
 * result, at most the context window), so an upper bound of the input tokens is
 * (min(uses, 10) + 1) × min(prompt + uses × result, window): at most 10 iterations a turn.
 */
import { GatewayError, text } from "../errors";
import { ceilDiv } from "../../lib/money";
import type { CatalogOffering } from "../catalog/types";
import type { NativeAnthropic } from "../model/types";

/** Server iterations Anthropic runs before it pauses the turn (`pause_turn`) when no `max_uses` says fewer. */
export const DEFAULT_MAX_USES = 10;
/** Input tokens one web search's results may add to the context (titles, URLs, encrypted page content). */
export const SEARCH_RESULT_TOKENS = 25_000;
/** The window of a model whose client sent Anthropic's `context-1m` beta. */
const ONE_MILLION = 1_000_000;

export interface ServerTools {
  /** The most web searches the call may run (searches are priced per 1,000). */
  searches: number;
  /** The most uses of any server tool, each adding a result to the context. */
  uses: number;
  /** Input tokens the results may add per use (the largest of the tools'); null: a whole window. */
  resultTokens: number | null;
  /** The index of the web search tool (for the refusal's `param`). */
  searchTool?: number;
  /** Why the body cannot be relayed (a tool or MCP server without a price), thrown by checkedFor. */
  refusal?: GatewayError;
}

const CLIENT_TOOL = /^(bash|text_editor|computer|memory)_\d+$/;
const NONE: ServerTools = { searches: 0, uses: 0, resultTokens: 0 };

function unsupported(what: string, param: string): GatewayError {
  return new GatewayError(
    "unsupported_parameter",
    text(
      `${what}은(는) 요금을 매길 수 없어 게이트웨이가 보내지 않습니다.`,
      `${what} cannot be priced, so the gateway does not relay it.`,
    ),
    { param },
  );
}

function maxUses(tool: Record<string, unknown>): number {
  const n = tool.max_uses;
  return typeof n === "number" && Number.isInteger(n) && n >= 0 ? n : DEFAULT_MAX_USES;
}

/**
 * The server tools of a native body. One that cannot be priced is kept as `refusal`, thrown
 * only for a candidate that would relay the body (checkedFor).
 */
export function parseServerTools(native: NativeAnthropic | undefined): ServerTools {
  if (!native) return NONE;
  const body = native.body;
  if (body.mcp_servers !== undefined)
    return { ...NONE, refusal: unsupported("mcp_servers (MCP connector)", "mcp_servers") };
  const tools = Array.isArray(body.tools) ? (body.tools as Record<string, unknown>[]) : [];
  const st: ServerTools = { searches: 0, uses: 0, resultTokens: 0 };
  tools.forEach((tool, i) => {
    const type = tool?.type;
    if (st.refusal || type === undefined || type === null || type === "custom") return;
    const t = String(type);
    if (CLIENT_TOOL.test(t)) return;
    if (t.startsWith("web_search_")) {
      const n = maxUses(tool);
      st.searches += n;
      st.uses += n;
      st.searchTool = i;
      if (st.resultTokens !== null) st.resultTokens = Math.max(st.resultTokens, SEARCH_RESULT_TOKENS);
      return;
    }
    if (t.startsWith("web_fetch_")) {
      st.uses += maxUses(tool);
      const cap = tool.max_content_tokens;
      st.resultTokens =
        typeof cap === "number" && cap > 0 && st.resultTokens !== null
          ? Math.max(st.resultTokens, Math.ceil(cap))
          : null;
      return;
    }
    st.refusal = unsupported(`The server tool '${t}'`, `tools[${i}]`);
  });
  return st;
}

/** The server tools as `o` (an Anthropic offering, which gets the body) runs them; 400 when it cannot price them. */
export function checkedFor(st: ServerTools, o: CatalogOffering): ServerTools {
  if (st.refusal) throw st.refusal;
  if (st.searches > 0 && o.pricing?.webSearchPer1k === undefined)
    throw unsupported(`Web search on '${o.modelId}' (${o.providerId})`, `tools[${st.searchTool ?? 0}]`);
  return st;
}

/** The most the searches may cost on any of `offerings` (Anthropic ones), in micro-won. */
export function serverSearchHoldMicro(offerings: readonly CatalogOffering[], st: ServerTools, fxMilli: bigint): bigint {
  let max = 0n;
  for (const o of offerings) {
    const per1k = BigInt(o.pricing?.webSearchPer1k ?? 0);
    const micro = ceilDiv(BigInt(st.searches) * per1k * fxMilli, 1_000_000n);
    if (micro > max) max = micro;
  }
  return max;
}

/** The most input tokens a call of `prompt` tokens may be billed for with these server tools on `o`. */
export function serverToolInput(prompt: number, st: ServerTools, o: CatalogOffering, beta?: string): number {
  if (st.uses === 0) return prompt;
  const window = Math.max(o.contextLength ?? ONE_MILLION, beta?.includes("context-1m") ? ONE_MILLION : 0);
  const grown = st.resultTokens === null ? window : prompt + st.uses * st.resultTokens;
  const perIteration = Math.max(prompt, Math.min(grown, window));
  // Several uses may share an iteration; Anthropic's loop runs at most DEFAULT_MAX_USES of them.
  return (Math.min(st.uses, DEFAULT_MAX_USES) + 1) * perIteration;
}
