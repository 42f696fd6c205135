/** `/docs` (the reference page; `/docs/` redirects to it), `/docs/json` (the OpenAPI document) and the page's assets. */
import { Elysia } from "elysia";
import { GatewayError } from "../../core/errors";
import { buildOpenApiDocument, type DocRoute, type DocumentInfo } from "./document";
import { ASSETS_PREFIX, assetResponse, DOCS_CSP, docsPage } from "./viewer";

const HIDDEN = { detail: { hide: true } };

/** `routes` is read at the first request for the document, once every route is added. */
export function docsRoutes(info: DocumentInfo, routes: () => readonly DocRoute[]) {
  let json: string | null = null;
  const page = docsPage(info.title);
  return new Elysia({ name: "docs" })
    .get(
      "/docs",
      ({ request }) => {
        // `/docs/` reaches this route too, but the page's relative asset URLs would resolve
        // under it (a blank page): sent to `/docs`, relatively, so a path prefix of a proxy stays.
        const url = new URL(request.url);
        if (url.pathname.endsWith("/"))
          return new Response(null, { status: 308, headers: { location: `../docs${url.search}` } });
        return new Response(page, {
          headers: {
            "content-type": "text/html; charset=utf-8",
            "content-security-policy": DOCS_CSP,
            "cache-control": "no-cache",
          },
        });
      },
      HIDDEN,
    )
    .get(
      "/docs/json",
      () => {
        json ??= JSON.stringify(buildOpenApiDocument(routes(), info));
        return new Response(json, {
          headers: { "content-type": "application/json; charset=utf-8", "cache-control": "no-cache" },
        });
      },
      HIDDEN,
    )
    .get(
      "/docs/assets/:version/:file",
      async ({ params, request }) => {
        // Only the current version: an old URL must not be cached for a year with new content.
        const res =
          `/docs/assets/${params.version}` === ASSETS_PREFIX ? await assetResponse(params.file, request) : null;
        if (!res) throw new GatewayError("not_found");
        return res;
      },
      HIDDEN,
    );
}
