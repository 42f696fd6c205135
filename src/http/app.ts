/**
 * The Elysia application: cross-cutting concerns (request id, authentication before the
 * body, body limits and JSON parsing, metrics, the single error renderer in each route's
 * dialect, OpenAPI) and every route group.
 */
import { Elysia } from "elysia";
import { bodyLeftUnread, readBody, readLimited, tooLarge } from "./body";
import type { AppDeps } from "./deps";
import { renderError } from "./errors";
import { ErrorDialects } from "./error-dialect";
import { requestLang } from "./lang";
import { assignRequestId, requestId, requestStart } from "./request-id";
import { beginRecord, requestRecord } from "./request-log";
import { RefusalFolder } from "./refusal-log";
import { errorCodeOf } from "./error-code";
import { shuttingDown } from "../core/calls/admission";
import { corsPolicy } from "./cors";
import { assertSecurityDeclared, BodyGate } from "./security";
import { docsRoutes } from "./openapi/routes";
import type { DocRoute } from "./openapi/document";
import { accountRoutes } from "./routes/account";
import { sessionRoutes } from "./routes/session";
import { adminRoutes } from "./routes/admin";
import { adminUserRoutes } from "./routes/admin-users";
import { healthRoutes } from "./routes/health";
import { keyRoutes } from "./routes/keys";
import { managementKeyRoutes } from "./routes/management-keys";

export { requestId } from "./request-id";

const WEBHOOK_ROUTE = "/v1/billing/webhooks/:provider";
/** Providers' events are a few KB; a stranger may not make the process buffer more. */
const WEBHOOK_MAX_BYTES = 256 * 1024;
const rawText = (bytes: Uint8Array) => new TextDecoder().decode(bytes);

export function createApp(d: AppDeps, extra: Elysia<any, any, any, any, any, any, any>[] = []) {
  const limit = d.config.MAX_BODY_BYTES;
  const bodyLimits = { maxBytes: limit, timeoutMs: d.config.BODY_READ_TIMEOUT_MS, maxDepth: d.config.MAX_JSON_DEPTH };
  // Bodies anyone may send (sign-up, login): a few KB, so strangers cannot make the process grow.
  const publicLimits = { ...bodyLimits, maxBytes: Math.min(limit, d.config.PUBLIC_MAX_BODY_BYTES) };
  const cors = corsPolicy(d.config.CORS_ORIGINS);
  // Routes are known once all are added; the gate indexes them at the first body.
  const gate = new BodyGate(d.auth, () => app.routes);
  // Each route's error dialect, as it declares it (Messages: Anthropic's envelope).
  const dialects = new ErrorDialects(() => app.routes);
  const observe = { lines: d.config.LOG_REQUESTS, tracer: d.tracer ?? null, refusals: new RefusalFolder() };
  const app = new Elysia({
    normalize: false,
    // Streams stay open while an upstream thinks; SSE keepalives keep proxies from cutting them.
    // No server-level body cap: Bun would answer a body past it with an empty 413 of its own.
    // onRequest refuses a declared length over the limit before reading anything, and every
    // body goes through the counting reader, so the limit holds with our envelope.
    serve: { idleTimeout: 255, maxRequestBodySize: Number.MAX_SAFE_INTEGER },
  })
    .use(
      docsRoutes(
        {
          title: "Model Gateway API",
          version: "0.1.0",
          description:
            "OpenAI-compatible chat and Responses, Anthropic Messages, keys, routing policies, video jobs, statistics. Amounts in KRW.",
        },
        (): DocRoute[] => app.routes,
      ),
    )
    .onRequest(({ request, set, server }) => {
      const { id, start } = assignRequestId(request);
      const rec = beginRecord(request, id, start, observe);
      if (rec) rec.clientIp = d.auth.clientIp(request, server);
      set.headers["x-request-id"] = id;
      // Which of the host's processes answered (src/boot/processes.ts): for operators and their tests.
      if (d.processIndex !== undefined) set.headers["x-gateway-process"] = String(d.processIndex);
      // Security headers on every answer (a handler's own Cache-Control wins: stats stay
      // publicly cacheable, streams keep theirs); an authenticated answer is never stored.
      set.headers["x-content-type-options"] = "nosniff";
      if (request.headers.has("authorization") || request.headers.has("x-api-key"))
        set.headers["cache-control"] = "no-store";
      if (cors) {
        const preflight = cors.apply(request, set.headers);
        if (preflight) {
          rec?.answeredEarly(preflight.status);
          return preflight;
        }
      }
      // A stopping process takes no new request, also on a connection kept alive (src/boot/shutdown.ts).
      const refused = d.draining?.() ? shuttingDown() : null;
      if (refused || Number(request.headers.get("content-length") ?? 0) > limit) {
        const err = refused ?? tooLarge();
        d.metrics.requests.inc({ route: "unmatched", method: request.method, status: err.status });
        if (rec) rec.error = err.errorCode;
        const dialect = dialects.ofRequest(request.method, new URL(request.url).pathname);
        const res = renderError(undefined, err, id, requestLang(request), dialect);
        rec?.answeredEarly(res.status);
        res.headers.set("connection", "close"); // the body is not read: stop receiving it
        return res;
      }
    })
    // The body is read only for a caller the route's credential admits (checked from the
    // headers first), then under the size limit, the deadline and the nesting depth. A public
    // route's body is throttled first (sign-up, login) and then read under the public limit: a
    // declared length over it is refused unread, a chunked body cut off past it.
    .onParse(async ({ request, server, route, contentType }) => {
      if (request.method === "GET" || request.method === "HEAD") return;
      const { public: open } = await gate.check(request, server, route);
      if (open) await d.throttle.beforeBody(request, route, d.auth.clientIp(request, server));
      // A payment webhook is verified over its exact bytes (Stripe's signature): kept as text.
      if (route === WEBHOOK_ROUTE)
        return rawText(await readLimited(request, { ...bodyLimits, maxBytes: WEBHOOK_MAX_BYTES }));
      const body = await readBody(request, contentType, open ? publicLimits : bodyLimits);
      // An empty body parses as undefined; let the route's schema report what is missing.
      return body === undefined ? {} : body;
    })
    .onError(({ code, error, request, set, route }) => {
      const id = requestId(request);
      // The client went away (its abort ended the upstream call): nobody reads this answer,
      // and it is not a server error. 499 as in nginx, for the metrics only.
      const rec = requestRecord(request);
      if (request.signal.aborted) {
        if (rec) rec.error = "client_closed";
        set.status = 499;
        return new Response(null, { status: 499 });
      }
      const res = renderError(code, error, id, requestLang(request), dialects.ofRoute(request.method, route));
      set.status = res.status; // so /metrics counts the status actually sent
      if (rec) rec.error = errorCodeOf(code, error, res.status);
      res.headers.set("x-request-id", id);
      for (const [k, v] of Object.entries(set.headers))
        if (
          k.startsWith("x-ratelimit") ||
          k.startsWith("access-control-") ||
          k === "vary" ||
          k === "set-cookie" ||
          k === "x-gateway-process"
        )
          res.headers.set(k, String(v));
      res.headers.set("x-content-type-options", "nosniff");
      if (request.headers.has("authorization") || request.headers.has("x-api-key"))
        res.headers.set("cache-control", "no-store");
      // Refused before (or while) its body was read: close rather than receive the rest.
      if (bodyLeftUnread(request)) res.headers.set("connection", "close");
      return res;
    })
    .onAfterResponse(({ request, route, set, responseValue }) => {
      const start = requestStart(request);
      const status =
        responseValue instanceof Response ? responseValue.status : typeof set.status === "number" ? set.status : 200;
      const rec = requestRecord(request);
      if (rec) {
        rec.route = route || "unmatched";
        // A stream that ended as the client left already says 499.
        if (rec.status !== 499) rec.status = status;
        rec.release();
      }
      d.metrics.requests.inc({ route: route || "unmatched", method: request.method, status });
      if (start !== undefined)
        d.metrics.latency.observe((performance.now() - start) / 1000, { route: route || "unmatched" });
    })
    // The counts of refusals folded in the last second are written before the process ends.
    .onStop(() => observe.refusals.flush(true))
    .use(healthRoutes(d))
    .use(accountRoutes(d))
    .use(sessionRoutes(d))
    .use(adminRoutes(d))
    .use(adminUserRoutes(d))
    .use(keyRoutes(d))
    .use(managementKeyRoutes(d));
  for (const e of extra) app.use(e);
  assertSecurityDeclared(app.routes);
  return app;
}
