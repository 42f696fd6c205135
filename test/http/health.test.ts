/** Liveness, readiness, Prometheus metrics and the OpenAPI document. */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { ADMIN_TOKEN, dbKinds, startTestGateway, type TestGateway } from "../harness";

setDefaultTimeout(30_000);

const kinds = await dbKinds();
for (const kind of kinds) {
  describe(`health on ${kind}`, () => {
    let g: TestGateway;
    beforeAll(async () => {
      g = await startTestGateway({ db: kind });
    }, 60_000);
    afterAll(async () => {
      await g?.stop();
    });

    test("/healthz is 200 and /readyz reports the database", async () => {
      const h = await g.call("GET", "/healthz");
      expect(h.status).toBe(200);
      expect(h.body).toEqual({ status: "ok" });
      const r = await g.call("GET", "/readyz");
      expect(r.status).toBe(200);
      expect(r.body).toEqual({ status: "ready", database: kind === "pg" ? "postgres" : "pglite" });
    });

    // Database-independent: checked on one gateway.
    if (kind === kinds[0])
      test("/metrics is Prometheus text with request counts by route and status, and open holds", async () => {
        await g.call("GET", "/healthz");
        await g.call("GET", "/v1/keys");
        await g.call("GET", "/v1/nowhere");
        await Bun.sleep(50); // counted after the response is sent
        const r = await fetch(g.url + "/metrics", { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
        expect(r.status).toBe(200);
        expect(r.headers.get("content-type")).toStartWith("text/plain");
        const text = await r.text();
        expect(text).toContain("# TYPE gateway_http_requests_total counter");
        expect(text).toMatch(/^gateway_http_requests_total\{method="GET",route="\/healthz",status="200"\} [1-9]\d*$/m);
        expect(text).toMatch(/^gateway_http_requests_total\{method="GET",route="\/v1\/keys",status="401"\} [1-9]\d*$/m);
        expect(text).toContain("# TYPE gateway_holds_open gauge");
        expect(text).toMatch(/^gateway_holds_open \d+$/m);
        expect(text).toContain("# TYPE gateway_http_request_duration_seconds histogram");
        // Every sample line is `name{labels} value`.
        for (const line of text.split("\n").filter((l) => l && !l.startsWith("#"))) {
          expect(line).toMatch(
            /^[a-zA-Z_:][a-zA-Z0-9_:]*(\{[^}]*\})? -?[0-9.e+-]+$|^[a-zA-Z_:][a-zA-Z0-9_:]*(\{[^}]*\})? (NaN|\+Inf|-Inf)$/,
          );
        }
      });

    // The error renderer sets the status it sends, so the after-response hook counts that one.
    if (kind === kinds[0])
      test("an unmatched route is counted with its real status (404)", async () => {
        await g.call("GET", "/v1/definitely-not-here");
        await Bun.sleep(50);
        const text = await g.metrics();
        expect(text).toMatch(/^gateway_http_requests_total\{[^}]*status="404"[^}]*\} [1-9]\d*$/m);
        expect(text).not.toMatch(/^gateway_http_requests_total\{[^}]*route="unmatched",status="200"[^}]*\}/m);
      });

    if (kind === kinds[0])
      test("/docs/json is an OpenAPI document listing the account and key endpoints", async () => {
        const r = await g.call("GET", "/docs/json");
        expect(r.status).toBe(200);
        expect(r.body.openapi).toMatch(/^3\./);
        expect(r.body.info.title).toBeString();
        for (const path of [
          "/v1/keys",
          "/v1/auth/signup",
          "/v1/auth/login",
          "/v1/me",
          "/v1/management-keys",
          "/v1/provisioning/keys",
          "/v1/admin/settings",
        ]) {
          expect([path, r.body.paths[path] !== undefined]).toEqual([path, true]);
        }
        expect(Object.keys(r.body.paths["/v1/keys"])).toEqual(expect.arrayContaining(["get", "post"]));
        // The signup body schema is documented.
        const signup = r.body.paths["/v1/auth/signup"].post;
        expect(JSON.stringify(signup)).toContain("password");
      });
  });
}
