/**
 * Brave Search's web search API (`GET /res/v1/web/search`), for the gateway's web plugin.
 * Results are deterministic, derived from the query words, so a test can predict the sources.
 * `[sim:…]` directives in the query are obeyed like anywhere else (`fail@brave=503` fails only
 * the search).
 */
import { parseDirectives, stripDirectives } from "../directives.ts";
import { obeyDirectives } from "../directive-effects.ts";
import { jsonResponse } from "../http.ts";
import type { SimContext, SimRouteTable } from "../routes.ts";

const MAX_COUNT = 20;

function slug(s: string): string {
  return (
    s
      .toLowerCase()
      .replace(/[^a-z0-9가-힣]+/g, "-")
      .replace(/^-+|-+$/g, "")
      .slice(0, 40) || "query"
  );
}

/** A small stable hash, so the same query always gives the same sites. */
function hash(s: string): number {
  let h = 2166136261;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 16777619);
  return h >>> 0;
}

const SITES = [
  "docs.example.com",
  "en.example.org",
  "news.example.net",
  "blog.example.dev",
  "ko.example.kr",
  "research.example.edu",
];

function simulatedResults(query: string, count: number) {
  const clean = stripDirectives(query).trim() || "query";
  const s = slug(clean);
  const h = hash(clean);
  return Array.from({ length: count }, (_, i) => {
    const host = SITES[(h + i) % SITES.length]!;
    const url = `https://${host}/${s}/${i + 1}`;
    return {
      title: `${clean.slice(0, 60)} — source ${i + 1}`,
      url,
      is_source_local: false,
      is_source_both: false,
      description: `Simulated result ${i + 1} about "${clean.slice(0, 80)}" from ${host}.`,
      page_age: "2026-11-01T00:00:00",
      profile: { name: host, url, long_name: host, img: "" },
      language: "en",
      family_friendly: true,
      type: "search_result",
      subtype: "generic",
      is_live: false,
      meta_url: { scheme: "https", netloc: host, hostname: host, favicon: "", path: `› ${s} › ${i + 1}` },
    };
  });
}

function errorBody(status: number, message?: string): Response {
  // Brave's error body is not documented in our samples; a plain JSON shape with the status.
  return jsonResponse(
    {
      type: "ErrorResponse",
      error: {
        status,
        code: status === 429 ? "RATE_LIMITED" : status === 401 ? "SUBSCRIPTION_TOKEN_INVALID" : "ERROR",
        detail: message ?? `simulated error ${status}`,
      },
    },
    status,
  );
}

async function search(ctx: SimContext): Promise<Response> {
  const q = ctx.url.searchParams.get("q") ?? "";
  if (!q) return errorBody(422, "q is required");
  const failed = await obeyDirectives(ctx, parseDirectives(q), ctx.url.search);
  if (failed) return failed;
  const count = Math.min(MAX_COUNT, Math.max(1, Number(ctx.url.searchParams.get("count") ?? 20) || 20));
  return jsonResponse({
    query: {
      original: q,
      show_strict_warning: false,
      is_navigational: false,
      spellcheck_off: true,
      country: "us",
      bad_results: false,
      should_fallback: false,
      more_results_available: true,
    },
    mixed: {
      type: "mixed",
      main: Array.from({ length: count }, (_, index) => ({ type: "web", index, all: false })),
      top: [],
      side: [],
    },
    type: "search",
    web: { type: "search", results: simulatedResults(q, count), family_friendly: true },
  });
}

export const braveSearchRoutes: SimRouteTable = {
  protocol: "brave-web-search",
  authenticate: (req) =>
    req.headers.get("x-subscription-token") ? undefined : errorBody(401, "missing X-Subscription-Token"),
  error: errorBody,
  routes: { "GET /res/v1/web/search": search },
};
