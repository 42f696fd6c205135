/**
 * Brave Search's web search API as a SearchProvider: `GET {base}/res/v1/web/search?q=&count=`
 * with the `X-Subscription-Token` header. Failures become UpstreamErrors like every adapter's.
 */
import type { SearchProvider, SearchResult } from "../../core/chat/web-search";
import { fetchWithDeadlines, readAllBytes } from "../../lib/http-deadline";
import { Type as T, type Static } from "@sinclair/typebox";
import { badAnswer, toTransportError, upstreamHttpError } from "../common/errors";
import { wireCheck } from "../common/wire-check";

export interface BraveOptions {
  baseUrl: string;
  apiKey: string;
  timeoutMs: number;
}

/** The fields of Brave's answer the adapter reads, checked on arrival (../common/wire-check.ts). */
const BraveWire = T.Object({
  web: T.Optional(
    T.Object({
      results: T.Optional(
        T.Array(
          T.Object({ title: T.Optional(T.String()), url: T.Optional(T.String()), description: T.Optional(T.String()) }),
        ),
      ),
    }),
  ),
});
type BraveWire = Static<typeof BraveWire>;
const checkBraveAnswer = wireCheck("search answer", BraveWire);

const utf8 = new TextDecoder();

/** Brave's descriptions carry `<strong>` highlights; the prompt wants plain text. */
function plain(s: string | undefined): string {
  return (s ?? "")
    .replace(/<[^>]+>/g, "")
    .replace(/&quot;/g, '"')
    .replace(/&amp;/g, "&")
    .replace(/&#39;/g, "'");
}

function fromBraveResponse(body: BraveWire, count: number): SearchResult[] {
  return (body.web?.results ?? [])
    .filter((r) => r.url)
    .slice(0, count)
    .map((r) => ({ title: plain(r.title) || r.url!, url: r.url!, description: plain(r.description) }));
}

export function braveSearchProvider(o: BraveOptions): SearchProvider {
  return {
    id: "brave",
    async search(query, count, signal) {
      const url =
        `${o.baseUrl.replace(/\/+$/, "")}/res/v1/web/search?` +
        new URLSearchParams({
          q: query.slice(0, 400),
          count: String(count),
          result_filter: "web",
          text_decorations: "false",
        });
      let res;
      try {
        res = await fetchWithDeadlines(
          url,
          { method: "GET", headers: { accept: "application/json", "x-subscription-token": o.apiKey } },
          {
            signal,
            firstByteTimeoutMs: o.timeoutMs,
            idleTimeoutMs: o.timeoutMs,
            mapBodyError: (e) => toTransportError(e, "body", signal),
          },
        );
      } catch (e) {
        throw toTransportError(e, "connect", signal);
      }
      const text = utf8.decode(await readAllBytes(res.body));
      if (!res.response.ok)
        throw upstreamHttpError(res.response.status, res.response.headers, text, {
          message: (_body, status) => `search failed with ${status}`,
        });
      let body: unknown;
      try {
        body = JSON.parse(text);
      } catch {
        throw badAnswer("search answer is not JSON", 200, text.slice(0, 500));
      }
      return fromBraveResponse(checkBraveAnswer(body, "brave"), count);
    },
  };
}
