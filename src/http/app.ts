/**
 * The Elysia application: cross-cutting concerns (request id, body limit, JSON parsing,
 * metrics, the single error renderer, OpenAPI) and every route group.
 */
import { Elysia } from "elysia";
import { swagger } from "@elysiajs/swagger";
import { readJson, tooLarge } from "./body";
import type { AppDeps } from "./deps";
import { renderError } from "./errors";
import { accountRoutes } from "./routes/account";
import { adminRoutes } from "./routes/admin";
import { healthRoutes } from "./routes/health";
import { keyRoutes } from "./routes/keys";
import { managementKeyRoutes } from "./routes/management-keys";

interface RequestMeta {
  id: string;
  start: number;
}
const meta = new WeakMap<Request, RequestMeta>();
const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

export function requestId(request: Request): string {
  return meta.get(request)?.id ?? "unknown";
}

export function createApp(d: AppDeps, extra: Elysia<any, any, any, any, any, any, any>[] = []) {
  const limit = d.config.MAX_BODY_BYTES;
  const app = new Elysia({
    normalize: false,
    // Streams stay open while an upstream thinks; SSE keepalives keep proxies from cutting them.
    serve: { idleTimeout: 255, maxRequestBodySize: limit + 1024 * 1024 },
  })
    .use(
      swagger({
        path: "/docs",
        documentation: {
          info: { title: "Model Gateway API", version: "0.1.0", description: "OpenAI-compatible chat and Responses, keys, routing policies, video jobs, statistics. Amounts in KRW." },
          components: { securitySchemes: { bearer: { type: "http", scheme: "bearer" } } },
          security: [{ bearer: [] }],
        },
      }),
    )
    .onRequest(({ request, set }) => {
      const given = request.headers.get("x-request-id");
      const id = given && REQUEST_ID.test(given) ? given : crypto.randomUUID();
      meta.set(request, { id, start: performance.now() });
      set.headers["x-request-id"] = id;
      if (Number(request.headers.get("content-length") ?? 0) > limit) {
        return renderError(undefined, tooLarge(), id);
      }
    })
    .onParse(async ({ request, contentType }) => {
      if (request.method === "GET" || request.method === "HEAD") return;
      if (!contentType || contentType.startsWith("application/json") || contentType.endsWith("+json")) {
        const body = await readJson(request, limit);
        // An empty body parses as undefined; let the route's schema report what is missing.
        return body === undefined ? {} : body;
      }
    })
    .onError(({ code, error, request, set }) => {
      const id = requestId(request);
      const res = renderError(code, error, id);
      res.headers.set("x-request-id", id);
      for (const [k, v] of Object.entries(set.headers)) if (k.startsWith("x-ratelimit")) res.headers.set(k, String(v));
      return res;
    })
    .onAfterResponse(({ request, route, set }) => {
      const m = meta.get(request);
      const status = typeof set.status === "number" ? set.status : 200;
      d.metrics.requests.inc({ route: route || "unmatched", method: request.method, status });
      if (m) d.metrics.latency.observe((performance.now() - m.start) / 1000, { route: route || "unmatched" });
    })
    .use(healthRoutes(d))
    .use(accountRoutes(d))
    .use(adminRoutes(d))
    .use(keyRoutes(d))
    .use(managementKeyRoutes(d));
  for (const e of extra) app.use(e);
  return app;
}

