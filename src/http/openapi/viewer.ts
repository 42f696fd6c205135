/**
 * The reference page at `/docs`: Swagger UI at the exact version in package.json, served by
 * the gateway itself (embedded in the single binary), so the page works without internet and
 * makes no request to another origin (its Content-Security-Policy says so to the browser).
 * Assets live under a versioned path and are cached for a year; gzip when the client takes it.
 */
import bundlePath from "swagger-ui-dist/swagger-ui-bundle.js" with { type: "file" };
import cssPath from "swagger-ui-dist/swagger-ui.css" with { type: "file" };
import { version as VIEWER_VERSION } from "swagger-ui-dist/package.json" with { type: "json" };

export const ASSETS_PREFIX = `/docs/assets/swagger-ui-${VIEWER_VERSION}`;

// The document's URL is resolved against the page's, as the assets are.
// validatorUrl: null, or Swagger UI would send the document to an outside validator.
const INIT_JS = `window.ui = SwaggerUIBundle({
  url: new URL("docs/json", location.href.replace(/\\/docs\\/?(?:[?#].*)?$/, "/")).href,
  dom_id: "#swagger-ui",
  validatorUrl: null,
  deepLinking: true,
  presets: [SwaggerUIBundle.presets.apis],
  layout: "BaseLayout",
});
`;

export const DOCS_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/** Asset references are relative to the page (`/docs`), so it also works behind a path prefix. */
export function docsPage(title: string): string {
  const base = ASSETS_PREFIX.slice(1);
  const esc = (s: string) => s.replace(/[&<>"]/g, (c) => `&#${c.charCodeAt(0)};`);
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(title)}</title>
<link rel="stylesheet" href="${base}/swagger-ui.css">
</head>
<body>
<div id="swagger-ui"></div>
<script src="${base}/swagger-ui-bundle.js"></script>
<script src="${base}/init.js"></script>
</body>
</html>
`;
}

interface Asset {
  type: string;
  load: () => Promise<Uint8Array<ArrayBuffer>>;
}
const ASSETS: Record<string, Asset> = {
  "swagger-ui-bundle.js": {
    type: "text/javascript; charset=utf-8",
    load: async () => new Uint8Array(await Bun.file(bundlePath).arrayBuffer()),
  },
  "swagger-ui.css": {
    type: "text/css; charset=utf-8",
    load: async () => new Uint8Array(await Bun.file(cssPath).arrayBuffer()),
  },
  "init.js": { type: "text/javascript; charset=utf-8", load: async () => new TextEncoder().encode(INIT_JS) },
};

/** Read and compressed once, on first use (about 1.9 MB → 0.5 MB). */
const loaded = new Map<string, Promise<{ plain: Uint8Array<ArrayBuffer>; gzip: Uint8Array<ArrayBuffer> }>>();

/** The asset's answer, or null for a name that is not one. */
export async function assetResponse(name: string, request: Request): Promise<Response | null> {
  const asset = ASSETS[name];
  if (!asset) return null;
  let entry = loaded.get(name);
  if (!entry) {
    entry = asset.load().then((plain) => ({ plain, gzip: Bun.gzipSync(plain) }));
    loaded.set(name, entry);
  }
  const { plain, gzip } = await entry;
  const headers: Record<string, string> = {
    "content-type": asset.type,
    "cache-control": "public, max-age=31536000, immutable",
    vary: "accept-encoding",
  };
  const gz = /\bgzip\b/.test(request.headers.get("accept-encoding") ?? "");
  if (gz) headers["content-encoding"] = "gzip";
  return new Response(gz ? gzip : plain, { headers });
}
