/** The web plugin's step of a chat call: search after the hold, put the sources in the prompt, cite them in the answer. */
import type { ChatPlan } from "./plan";
import { UpstreamError } from "../upstream/error";
import { withMessages } from "../model/types";
import {
  citationsFor,
  lastUserText,
  searchFailure,
  withSearchResults,
  type SearchProvider,
  type SearchResult,
  type UrlCitation,
  type WebPluginOptions,
} from "./web-search";

/**
 * Runs the web search after the hold (so only a funded caller can search) and before the
 * model call: the query is the last user message as it leaves for the provider (PII masked,
 * so personal data never reaches the search engine). A failed search releases the hold and
 * fails the call, unless the plugin is `optional`, in which case the call goes on without
 * sources and the search is not charged.
 */
export async function searchBeforeCall(
  plan: ChatPlan,
  web: WebPluginOptions,
  priceMicro: bigint,
  search: SearchProvider | undefined,
  fail: (err: unknown) => Promise<void>,
): Promise<void> {
  const query = lastUserText(plan.upstream.messages).trim();
  let results: SearchResult[] = [];
  try {
    if (!search) throw new UpstreamError("transient", "no search provider is configured");
    if (query) results = await search.search(query, web.maxResults, plan.caller.signal);
  } catch (e) {
    if (web.optional) {
      plan.search = { results: [], priceMicro: 0n };
      return;
    }
    const err = searchFailure(e, search?.id ?? "search", plan.caller.requestId);
    await fail(err);
    throw err;
  }
  plan.search = { results, priceMicro: results.length ? priceMicro : 0n };
  plan.upstream = withMessages(plan.upstream, withSearchResults(plan.upstream.messages, results, web.searchPrompt));
}

/** The web plugin's sources as citations of `content` (none without the plugin). */
export function citationsOf(plan: ChatPlan, content: string | null): { citations?: UrlCitation[] } {
  return plan.search?.results.length ? { citations: citationsFor(content, plan.search.results) } : {};
}
