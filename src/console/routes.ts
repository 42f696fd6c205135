/**
 * The web console at `/` and its hashed files under `/console/`: brotli or gzip as the client
 * accepts, hashed files cached for a year, the page itself revalidated on every load.
 * Hidden from the OpenAPI document: these are pages, not API.
 */
import { Elysia } from "elysia";
import { GatewayError } from "../core/errors";
import { consoleBundle } from "./assets";
import { compressed, type ConsoleFile } from "./bundle";
import { consoleCsp, indexPage, PAGE_HEADERS } from "./page";

const HIDDEN = { detail: { hide: true } };

function encoded(file: ConsoleFile, request: Request): { body: Uint8Array; encoding?: string } {
  const accept = request.headers.get("accept-encoding") ?? "";
  if (/\bbr\b/.test(accept)) return { body: file.br, encoding: "br" };
  if (/\bgzip\b/.test(accept)) return { body: file.gzip, encoding: "gzip" };
  return { body: file.plain };
}

function respond(file: ConsoleFile, request: Request, headers: Record<string, string>): Response {
  const { body, encoding } = encoded(file, request);
  return new Response(body as Uint8Array<ArrayBuffer>, {
    headers: {
      ...headers,
      "content-type": file.type,
      vary: "accept-encoding",
      ...(encoding && { "content-encoding": encoding }),
    },
  });
}

export function consoleRoutes(fxUsdKrw: number, paySources?: { script: string[]; frame: string[]; connect: string[] }) {
  let index: ConsoleFile | null = null;
  const headers = { ...PAGE_HEADERS, "content-security-policy": consoleCsp(paySources) };
  return new Elysia({ name: "console" })
    .get(
      "/",
      async ({ request }) => {
        index ??= compressed(
          "text/html; charset=utf-8",
          new TextEncoder().encode(indexPage(await consoleBundle(), fxUsdKrw)),
        );
        return respond(index, request, { ...headers, "cache-control": "no-cache" });
      },
      HIDDEN,
    )
    .get(
      "/console/:file",
      async ({ params, request }) => {
        const file = (await consoleBundle()).files[params.file];
        if (!file) throw new GatewayError("not_found");
        return respond(file, request, { ...PAGE_HEADERS, "cache-control": "public, max-age=31536000, immutable" });
      },
      HIDDEN,
    );
}
