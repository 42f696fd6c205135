/** Liveness, readiness (database reachable) and Prometheus metrics (behind a token). */
import type { Static } from "@sinclair/typebox";
import { Elysia } from "elysia";
import type { AppDeps } from "../deps";
import { AUTH } from "../security";
import { answer, answerAs, ok } from "../openapi/describe";
import { Health, Readiness } from "../openapi/shapes";

export function healthRoutes(deps: AppDeps) {
  return new Elysia({ name: "health" })
    .get("/healthz", () => ({ status: "ok" }), {
      detail: { security: AUTH.none, tags: ["operations"], summary: "Liveness", responses: ok(Health) },
    })
    .get(
      "/readyz",
      async ({ set }) => {
        try {
          await Promise.race([
            deps.db.query("select 1"),
            Bun.sleep(2000).then(() => Promise.reject(new Error("timeout"))),
          ]);
          return { status: "ready", database: deps.db.kind } satisfies Static<typeof Readiness>;
        } catch {
          set.status = 503;
          return { status: "unavailable", database: deps.db.kind } satisfies Static<typeof Readiness>;
        }
      },
      {
        detail: {
          security: AUTH.none,
          tags: ["operations"],
          summary: "Readiness: the database answers",
          responses: { ...ok(Readiness, "Ready"), ...answer(503, Readiness, "The database does not answer") },
        },
      },
    )
    .get(
      "/metrics",
      async ({ request, server }) => {
        // Operators only: a scraper's METRICS_TOKEN (or the admin token); 404 without either.
        await deps.auth.metrics(request, server);
        // Several processes on the host: all of theirs (src/boot/host-metrics.ts).
        if (deps.hostMetrics)
          return new Response(await deps.hostMetrics(), {
            headers: { "content-type": "text/plain; version=0.0.4; charset=utf-8" },
          });
        // Database-backed values (video queue) are refreshed at most every few seconds.
        await deps.metrics.registry.refresh();
        return new Response(deps.metrics.registry.render(), {
          headers: { "content-type": "text/plain; version=0.0.4; charset=utf-8" },
        });
      },
      {
        detail: {
          security: AUTH.metrics,
          tags: ["operations"],
          summary: "Prometheus metrics (METRICS_TOKEN, or the admin token)",
          responses: answerAs(200, "text/plain", { type: "string" }, "Prometheus text format"),
        },
      },
    );
}
