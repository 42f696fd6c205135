/**
 * The console as HTTP serves it: the page under a strict CSP, hashed files compressed and
 * cached for a year, the JavaScript under its budget, and the API paths untouched.
 */
import { describe, expect, test, setDefaultTimeout } from "bun:test";
import { gunzipSync, brotliDecompressSync } from "node:zlib";
import { suiteGateway } from "../harness";
import { bundleConsole, firstLoadJsGzip, JS_BUDGET_GZIP_BYTES } from "../../src/console/bundle";
import { parseBundle, serializeBundle } from "../../src/console/assets";

setDefaultTimeout(30_000);

const raw = (url: string, encoding: string) =>
  fetch(url, { headers: { "accept-encoding": encoding }, decompress: false } as RequestInit);

describe("the console over HTTP", () => {
  const gw = suiteGateway({ env: { FX_USD_KRW: "1375.5" } });

  test("the page: strict CSP, no inline script or style, never framed, revalidated", async () => {
    const r = await fetch(gw().url + "/");
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toBe("text/html; charset=utf-8");
    const csp = r.headers.get("content-security-policy")!;
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toContain("unsafe-inline");
    expect(csp).not.toContain("unsafe-eval");
    expect(r.headers.get("x-frame-options")).toBe("DENY");
    expect(r.headers.get("cache-control")).toBe("no-cache");
    const html = await r.text();
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)/);
    expect(html).not.toMatch(/<style|style=/);
    expect(html).toContain('<meta name="gw-fx-usd-krw" content="1375.5">');
    expect(html).not.toMatch(/https?:\/\//);
  });

  test("hashed files: brotli or gzip as accepted, immutable for a year; an unknown one is 404", async () => {
    const html = await (await fetch(gw().url + "/")).text();
    const refs = [...html.matchAll(/(?:src|href)="(console\/[^"]+)"/g)].map((m) => m[1]!);
    expect(refs.some((r) => r.endsWith(".js"))).toBe(true);
    expect(refs.some((r) => r.endsWith(".css"))).toBe(true);
    for (const ref of refs) {
      expect(ref).toMatch(/-[a-z0-9]{8}\.(js|css)$/);
      const plain = await raw(`${gw().url}/${ref}`, "identity");
      expect(plain.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
      expect(plain.headers.get("content-encoding")).toBeNull();
      const body = new Uint8Array(await plain.arrayBuffer());
      const br = await raw(`${gw().url}/${ref}`, "gzip, deflate, br");
      expect(br.headers.get("content-encoding")).toBe("br");
      expect(brotliDecompressSync(new Uint8Array(await br.arrayBuffer()))).toEqual(Buffer.from(body));
      const gz = await raw(`${gw().url}/${ref}`, "gzip");
      expect(gz.headers.get("content-encoding")).toBe("gzip");
      const gzBody = new Uint8Array(await gz.arrayBuffer());
      expect(gunzipSync(gzBody)).toEqual(Buffer.from(body));
      expect(gzBody.length).toBeLessThan(body.length);
    }
    const missing = await fetch(gw().url + "/console/main-00000000.js");
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as any).error.type).toBe("not_found");
  });

  test("the API is unchanged beside it: / does not shadow /v1, /docs or the health checks", async () => {
    expect((await fetch(gw().url + "/healthz")).status).toBe(200);
    expect((await fetch(gw().url + "/v1/models")).status).toBe(200);
    const doc: any = await (await fetch(gw().url + "/docs/json")).json();
    expect(Object.keys(doc.paths).filter((p) => p === "/" || p.startsWith("/console"))).toEqual([]);
  });
});

describe("the console bundle", () => {
  test("the first load's gzipped JavaScript is under the 250 KB budget, and survives embedding", async () => {
    const b = await bundleConsole();
    const js = firstLoadJsGzip(b);
    expect(js).toBeGreaterThan(10_000);
    expect(js).toBeLessThanOrEqual(JS_BUDGET_GZIP_BYTES);
    const back = parseBundle(serializeBundle(b));
    expect(back.scripts).toEqual(b.scripts);
    for (const [name, f] of Object.entries(b.files)) expect(back.files[name]!.br).toEqual(f.br);
  });
});
