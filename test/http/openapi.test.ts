/**
 * The API reference for people and tools: `/docs/json` is a valid OpenAPI 3.1 document (a real
 * validator and Redocly's recommended lint, zero errors), every operation states its success
 * status, answer schema, error answers and security, the success statuses the gateway really
 * sends are the documented ones, a typed client generated from the document compiles (and a
 * wrong call does not), and the `/docs` page loads only from the gateway itself.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import SwaggerParser from "@apidevtools/swagger-parser";
import { createConfig, lintFromString } from "@redocly/openapi-core";
import openapiTS from "openapi-typescript";
import { ADMIN_TOKEN, startTestGateway, type TestGateway } from "../harness";
import { Type } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import { buildOpenApiDocument, documentedPath, type DocRoute } from "../../src/http/openapi/document";
import { created } from "../../src/http/openapi/describe";
import { AUTH } from "../../src/http/security";
import { fastUser } from "../support/http";

setDefaultTimeout(60_000);

let g: TestGateway;
let doc: any;

beforeAll(async () => {
  g = await startTestGateway({ db: "pglite", env: { VIDEO_POLL_WORKERS: "0", STATS_ROLLUP_INTERVAL_MS: "0" } });
  const r = await fetch(g.url + "/docs/json");
  expect(r.status).toBe(200);
  doc = await r.json();
}, 60_000);
afterAll(async () => {
  await g?.stop();
});

const METHODS = ["get", "put", "post", "delete", "patch", "head"];
const operations = (d: any = doc): { method: string; path: string; op: any }[] =>
  Object.entries<any>(d.paths).flatMap(([path, ops]) =>
    Object.entries<any>(ops)
      .filter(([m]) => METHODS.includes(m))
      .map(([method, op]) => ({ method, path, op })),
  );

/** What a document leaves out: a success answer with its schema, security, 401 where secured, path parameters. */
function documentationProblems(d: any): string[] {
  const problems: string[] = [];
  for (const { method, path, op } of operations(d)) {
    const name = `${method.toUpperCase()} ${path}`;
    if (op["x-undocumented"]) problems.push(`${name}: no detail.responses (see src/http/openapi/describe.ts)`);
    if (op["x-security-undeclared"] || !Array.isArray(op.security))
      problems.push(`${name}: no detail.security (see src/http/security.ts)`);
    const codes = Object.keys(op.responses ?? {});
    const success = codes.filter((c) => c.startsWith("2"));
    if (!success.length && !codes.includes("501")) problems.push(`${name}: no success status`);
    for (const c of success)
      if (c !== "204" && !op.responses[c].content) problems.push(`${name}: ${c} without a body schema`);
    if (op.security?.length && !codes.includes("401")) problems.push(`${name}: secured but no 401`);
    for (const m of path.matchAll(/\{([^}]+)\}/g)) {
      if (!(op.parameters ?? []).some((p: any) => p.in === "path" && p.name === m[1] && p.required))
        problems.push(`${name}: path parameter ${m[1]} not declared`);
    }
    if (path.includes("*") || path.includes(":")) problems.push(`${name}: not in OpenAPI path form`);
  }
  return problems;
}

/** Observed success statuses (`METHOD /path` → statuses) that the document does not list for their operation. */
function undocumentedSuccesses(observed: Map<string, Set<string>>, d: any): string[] {
  const out: string[] = [];
  for (const [op, statuses] of observed) {
    const [method, path] = op.split(" ") as [string, string];
    const responses = d.paths[path]?.[method.toLowerCase()]?.responses ?? {};
    for (const s of statuses) if (!responses[s]) out.push(`${op} answered ${s}`);
  }
  return out;
}

describe("the OpenAPI document", () => {
  test("is a valid OpenAPI 3.1 document (swagger-parser)", async () => {
    expect(doc.openapi).toBe("3.1.0");
    await SwaggerParser.validate(structuredClone(doc));
  });

  test("passes Redocly's recommended lint with zero errors", async () => {
    const config = await createConfig({ extends: ["recommended"] });
    const problems = await lintFromString({ source: JSON.stringify(doc), absoluteRef: "openapi.json", config });
    const errors = problems
      .filter((p) => p.severity === "error")
      .map((p) => `${p.ruleId}: ${p.message} at ${p.location[0]?.pointer}`);
    expect(errors).toEqual([]);
    // The only warnings: routes that cannot answer a 4xx (health, the model list), compact's lone
    // 501, and no license (the project has not published one).
    const expected = new Set(["operation-4xx-response", "operation-2xx-response", "info-license"]);
    expect([...new Set(problems.map((p) => p.ruleId))].filter((r) => !expected.has(r))).toEqual([]);
  });

  test("every operation declares its success answer, its security and its path parameters", () => {
    expect(documentationProblems(doc)).toEqual([]);
  });

  test("a route added without its answers or its security is caught", () => {
    const routes: DocRoute[] = [
      { method: "GET", path: "/v1/admin/things", hooks: { detail: { security: AUTH.admin, summary: "List things" } } },
      {
        method: "POST",
        path: "/v1/things/:thing_id",
        hooks: {
          body: Type.Object({ a: Type.String() }),
          detail: { summary: "Make a thing", responses: created(Type.Object({})) },
        },
      },
    ];
    expect(documentationProblems(buildOpenApiDocument(routes, { title: "t", version: "1", description: "d" }))).toEqual(
      [
        "GET /v1/admin/things: no detail.responses (see src/http/openapi/describe.ts)",
        "GET /v1/admin/things: 200 without a body schema",
        "POST /v1/things/{thing_id}: no detail.security (see src/http/security.ts)",
      ],
    );
  });

  test("the error answers are the specification's three shapes, defined once and referenced", () => {
    const { schemas, responses } = doc.components;
    expect(Object.keys(schemas)).toEqual(
      expect.arrayContaining(["StructuredError", "CompatibleError", "ValidationError"]),
    );
    expect(responses.ValidationFailed.content["application/json"].schema.anyOf).toContainEqual({
      $ref: "#/components/schemas/ValidationError",
    });
    expect(responses.NotFound.content["application/json"].schema).toEqual({
      $ref: "#/components/schemas/CompatibleError",
    });
    expect(responses.Unauthorized.content["application/json"].schema).toEqual({
      $ref: "#/components/schemas/StructuredError",
    });
    const chat = doc.paths["/v1/chat/completions"].post;
    expect(chat.responses["422"]).toEqual({ $ref: "#/components/responses/ValidationFailed" });
    expect(chat.responses["402"]).toEqual({ $ref: "#/components/responses/PaymentRequired" });
    expect(chat.security).toEqual([{ apiKey: [] }]);
    expect(Object.keys(chat.responses["200"].content)).toEqual(["application/json", "text/event-stream"]);
    expect(Object.keys(chat.responses["200"].headers)).toEqual(
      expect.arrayContaining(["X-Request-Id", "X-RateLimit-Remaining", "X-Cost-KRW", "X-Policy-Decision"]),
    );
    expect(doc.components.headers["X-Cost-KRW"].schema).toEqual({ type: "string" });
    expect(Object.keys(doc.components.securitySchemes).sort()).toEqual([
      "adminToken",
      "apiKey",
      "dashboardJwt",
      "managementKey",
      "metricsToken",
      "sessionCookie",
      "xApiKey",
    ]);
  });

  test("real success statuses: 201 creates, 202 video submit, 200/206 content, 501 compact", () => {
    const codes = (path: string, method: string) =>
      Object.keys(doc.paths[path][method].responses).filter((c) => /^[25]/.test(c) && c !== "503");
    expect(codes("/v1/auth/signup", "post")).toEqual(["201"]);
    expect(codes("/v1/keys", "post")).toEqual(["201"]);
    expect(codes("/v1/video/generations", "post")).toEqual(["202", "502"]);
    expect(codes("/v1/jobs/{job_id}/content", "get")).toEqual(["200", "206"]);
    expect(codes("/v1/responses/compact", "post")).toEqual(["501"]);
    expect(doc.paths["/v1/keys"].post.responses["201"].content["application/json"].schema).toEqual({
      $ref: "#/components/schemas/ApiKey",
    });
    expect(doc.paths["/v1/stats/models"].get.responses["200"].content["application/json"].schema).toEqual({
      $ref: "#/components/schemas/ModelsStats",
    });
    expect(Object.keys(doc.paths["/v1/video/generations"].post.responses["202"].headers)).toEqual(
      expect.arrayContaining(["Location", "Idempotent-Replayed"]),
    );
  });

  test("GET /v1/models/{id} is documented, and ids with a slash work raw and encoded", async () => {
    const op = doc.paths["/v1/models/{id}"]?.get;
    expect(op?.parameters).toContainEqual(expect.objectContaining({ name: "id", in: "path", required: true }));
    expect(op.responses["200"].content["application/json"].schema).toEqual({ $ref: "#/components/schemas/Model" });
    const slashed =
      ((await g.call("GET", "/v1/models")).body.data as any[]).find((m) => m.vendor_id?.includes("/"))?.vendor_id ??
      "openai/gpt-4o-mini";
    for (const path of [`/v1/models/${slashed}`, `/v1/models/${encodeURIComponent(slashed)}`]) {
      const r = await g.call("GET", path);
      expect([path, r.status]).toEqual([path, 200]);
    }
  });
});

/** Routes' success statuses as /metrics counted them: `METHOD /openapi/path` → statuses. */
async function observedSuccesses(): Promise<Map<string, Set<string>>> {
  const text = await g.metrics();
  const byRoute = new Map(g.gw.app.routes.map((r: any) => [`${r.method} ${r.path}`, documentedPath(r)]));
  const out = new Map<string, Set<string>>();
  for (const m of text.matchAll(/^gateway_http_requests_total\{([^}]*)\} \d+/gm)) {
    const labels = Object.fromEntries([...m[1]!.matchAll(/(\w+)="([^"]*)"/g)].map((x) => [x[1], x[2]]));
    if (!/^2/.test(labels.status!) || labels.route === "unmatched") continue;
    const path = byRoute.get(`${labels.method} ${labels.route}`);
    if (!path || path.startsWith("/docs")) continue;
    const key = `${labels.method} ${path}`;
    out.set(key, (out.get(key) ?? new Set()).add(labels.status!));
  }
  return out;
}

/** Where a JSON answer departs from the schema its route declares, or null. */
function answerMismatch(method: string, path: string, status: number, body: unknown): string | null {
  const pattern = (p: string) => new RegExp(`^${p.replace(/:[^/]+/g, "[^/]+").replace(/\*/g, ".+")}$`);
  const route = g.gw.app.routes.find((r: any) => r.method === method && pattern(r.path).test(path)) as any;
  const declared =
    route?.hooks?.detail?.responses?.[status] ??
    (status === 200 ? { content: { "application/json": { schema: route?.hooks?.response?.[200] } } } : undefined);
  const schema = declared?.content?.["application/json"]?.schema;
  if (!schema)
    return typeof body === "object" && body !== null
      ? `${method} ${path}: ${status} has no documented JSON schema`
      : null;
  if (Value.Check(schema, body)) return null;
  const first = Value.Errors(schema, body).First();
  return `${method} ${path} ${status}: ${first?.path || "/"} ${first?.message}`;
}

describe("the statuses the gateway sends are the documented ones", () => {
  test("a tour of the API: every 2xx answered is documented for its operation", async () => {
    const user = await fastUser(g, { creditKrw: 100_000 });
    const jwt = { token: user.jwt };
    const admin = { token: ADMIN_TOKEN };
    const mismatches: string[] = [];
    const expectOk = async (method: string, path: string, opts: { token?: string; body?: unknown } = {}) => {
      const r = await g.call(method, path, opts);
      expect([method, path, r.status < 300]).toEqual([method, path, true]);
      const problem = answerMismatch(method, path, r.status, r.body);
      if (problem) mismatches.push(problem);
      return r.body;
    };
    const email = `tour${crypto.randomUUID().slice(0, 8)}@test.example`;
    await expectOk("POST", "/v1/auth/signup", { body: { email, password: "tour-password-1" } });
    await expectOk("POST", "/v1/auth/login", { body: { email, password: "tour-password-1" } });
    await expectOk("GET", "/v1/me", jwt);
    const key = await expectOk("POST", "/v1/keys", { ...jwt, body: { name: "tour", scopes: ["chat", "usage:read"] } });
    await expectOk("GET", "/v1/keys", jwt);
    await expectOk("GET", "/v1/keys/usage", jwt);
    const spare = await expectOk("POST", "/v1/keys", { ...jwt, body: { name: "spare" } });
    await expectOk("PATCH", `/v1/keys/${spare.id}`, { ...jwt, body: { name: "renamed" } });
    await expectOk("DELETE", `/v1/keys/${spare.id}`, jwt);
    const mgmt = await expectOk("POST", "/v1/management-keys", { ...jwt, body: { name: "m" } });
    await expectOk("GET", "/v1/management-keys", jwt);
    const child = await expectOk("POST", "/v1/provisioning/keys", { token: mgmt.key, body: { name: "c" } });
    await expectOk("GET", "/v1/provisioning/keys", { token: mgmt.key });
    await expectOk("DELETE", `/v1/provisioning/keys/${child.id}`, { token: mgmt.key });
    await expectOk("DELETE", `/v1/management-keys/${mgmt.id}`, jwt);
    await expectOk("POST", `/v1/admin/users/${user.id}/topups`, { ...admin, body: { amount_krw: 1000 } });
    await expectOk("PATCH", `/v1/admin/users/${user.id}`, { ...admin, body: { xborder_training_consent: false } });
    await expectOk("GET", "/v1/admin/settings", admin);
    await expectOk("PATCH", "/v1/admin/settings", { ...admin, body: {} });
    const org = await expectOk("POST", "/v1/admin/orgs", { ...admin, body: { name: "tour", owner_user_id: user.id } });
    await expectOk("POST", `/v1/admin/orgs/${org.org_id}/members`, {
      ...admin,
      body: { user_id: user.id, role: "owner" },
    });
    await expectOk("GET", "/v1/admin/orgs", admin);
    await expectOk("POST", `/v1/admin/users/${user.id}/delegated-keys`, { ...admin, body: {} });
    await expectOk("POST", `/v1/admin/users/${user.id}/byok-keys`, {
      ...admin,
      body: { provider: "openai", provider_api_key: "sk-test" },
    });
    const policy = await expectOk("POST", "/v1/routing-policies", {
      ...jwt,
      body: { slug: "tour", display_name: "t", policy_type: "fallback", entries: [{ model: "gpt-4o-mini" }] },
    });
    await expectOk("POST", "/v1/routing-policies/validate", {
      ...jwt,
      body: { slug: "tour2", display_name: "t", policy_type: "fallback", entries: [{ model: "gpt-4o-mini" }] },
    });
    await expectOk("GET", "/v1/routing-policies", jwt);
    await expectOk("GET", `/v1/routing-policies/${policy.id}`, jwt);
    await expectOk("GET", `/v1/routing-policies/${policy.id}/decisions`, jwt);
    await expectOk("PATCH", `/v1/routing-policies/${policy.id}`, { ...jwt, body: { display_name: "u" } });
    await expectOk("DELETE", `/v1/routing-policies/${policy.id}`, jwt);
    const api = { token: key.key };
    await expectOk("GET", "/v1/models", api);
    await expectOk("GET", "/v1/models/gpt-4o-mini", api);
    await expectOk("POST", "/v1/chat/completions", {
      ...api,
      body: { model: "gpt-4o-mini", messages: [{ role: "user", content: "hi" }], max_tokens: 5 },
    });
    await expectOk("POST", "/v1/embeddings", {
      ...api,
      body: { model: "text-embedding-3-small", input: ["hi", "there"] },
    });
    await expectOk("POST", "/v1/embeddings", {
      ...api,
      body: { model: "gemini-embedding-001", input: "hi", encoding_format: "base64" },
    });
    const resp = await expectOk("POST", "/v1/responses", { ...api, body: { model: "gpt-4o-mini", input: "hi" } });
    await g.gw.settlements.quiesce();
    await expectOk("POST", `/v1/responses/${resp.id}/feedback`, { ...jwt, body: { rating: "up" } });
    const job = await expectOk("POST", "/v1/video/generations", { ...api, body: { prompt: "a tour" } });
    await expectOk("GET", `/v1/jobs/${job.job_id}`, api);
    await expectOk("GET", "/v1/video/jobs", jwt);
    await expectOk("POST", `/v1/jobs/${job.job_id}/cancel`, api);
    const reader = await expectOk("POST", "/v1/keys", {
      ...jwt,
      body: { name: "tour reader", scopes: ["usage:read"] },
    });
    await expectOk("GET", "/v1/usage/report", { token: reader.key });
    const call = (await expectOk("GET", "/v1/activity", jwt)).data[0].request_id;
    await expectOk("GET", "/v1/activity", { token: reader.key });
    await expectOk("GET", "/v1/activity/summary", jwt);
    await expectOk("GET", `/v1/generations/${call}`, jwt);
    for (const s of ["models", "rankings", "usage-timeseries", "apps"]) await expectOk("GET", `/v1/stats/${s}`);
    for (const p of ["/healthz", "/readyz"]) await expectOk("GET", p);
    await expectOk("GET", "/metrics", { token: ADMIN_TOKEN });

    // Every JSON answer matches the schema its route documents (checked here, never in production).
    expect(mismatches).toEqual([]);
    const observed = await observedSuccesses();
    expect(undocumentedSuccesses(observed, doc)).toEqual([]);
    // The same check on a document that forgot the 201 of key creation names it.
    const forgot = structuredClone(doc);
    delete forgot.paths["/v1/keys"].post.responses["201"];
    expect(undocumentedSuccesses(observed, forgot)).toEqual(["POST /v1/keys answered 201"]);
    // The tour reached nearly every operation (not the video bytes, which need a finished Family G job).
    expect(observed.size).toBeGreaterThanOrEqual(40);
  });
});

describe("the reference page", () => {
  test("/docs loads only same-origin resources, each 200, under a Content-Security-Policy", async () => {
    const r = await fetch(g.url + "/docs");
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toStartWith("text/html");
    const csp = r.headers.get("content-security-policy") ?? "";
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'self'");
    const html = await r.text();
    expect(html).not.toMatch(/unpkg|jsdelivr|cdn\.|https?:\/\//i);
    expect(html).not.toMatch(/<script>[^<]|<style|\son\w+=/i); // nothing inline for the CSP to allow
    const refs = [...html.matchAll(/\s(?:src|href)="([^"]+)"/g)].map((m) => m[1]!);
    expect(refs.length).toBeGreaterThanOrEqual(3);
    for (const ref of refs) {
      const url = new URL(ref, g.url + "/docs");
      expect(url.origin).toBe(g.url);
      const a = await fetch(url, { headers: { "accept-encoding": "gzip" } });
      expect([ref, a.status]).toEqual([ref, 200]);
      expect(a.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
      expect((await a.arrayBuffer()).byteLength).toBeGreaterThan(0);
    }
    const init = await (await fetch(new URL(refs.find((x) => x.endsWith("init.js"))!, g.url + "/docs"))).text();
    expect(init).toContain("validatorUrl: null");
  });

  test("assets are gzipped when asked, and an unknown or stale asset is 404", async () => {
    const html = await (await fetch(g.url + "/docs")).text();
    const js = new URL(html.match(/src="([^"]+swagger-ui-bundle\.js)"/)![1]!, g.url + "/docs").pathname;
    // fetch() decompresses on its own; ask for the raw bytes with a plain request.
    const gz = await fetch(g.url + js, { headers: { "accept-encoding": "gzip" }, decompress: false } as RequestInit);
    expect(gz.headers.get("content-encoding")).toBe("gzip");
    const zipped = (await gz.arrayBuffer()).byteLength;
    const plain = await fetch(g.url + js, { headers: { "accept-encoding": "identity" } });
    expect(plain.headers.get("content-encoding")).toBeNull();
    const size = (await plain.arrayBuffer()).byteLength;
    expect(zipped).toBeLessThan(size / 2);
    for (const p of [
      "/docs/assets/swagger-ui-0.0.1/swagger-ui-bundle.js",
      js.replace("swagger-ui-bundle.js", "nope.js"),
    ]) {
      const r = await g.call("GET", p);
      expect([p, r.status]).toEqual([p, 404]);
    }
  });
});

describe("a typed client generated from the document", () => {
  const root = resolve(import.meta.dir, "../..");
  const tsc = join(root, "node_modules/.bin/tsc");
  let dir: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "gw-openapi-client-"));
    writeFileSync(join(dir, "schema.d.ts"), await openapiTS(structuredClone(doc), { silent: true }));
    writeFileSync(
      join(dir, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: {
          strict: true,
          noEmit: true,
          target: "ES2022",
          module: "Preserve",
          moduleResolution: "bundler",
          skipLibCheck: true,
          lib: ["ES2022", "DOM"],
          types: [],
          paths: { "openapi-fetch": [join(root, "node_modules/openapi-fetch/dist/index.d.mts")] },
        },
        include: ["*.ts"],
      }),
    );
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const typecheck = (code: string) => {
    writeFileSync(join(dir, "client.ts"), code);
    const p = Bun.spawnSync([tsc, "-p", dir], { stdout: "pipe", stderr: "pipe" });
    return { ok: p.exitCode === 0, output: p.stdout.toString() + p.stderr.toString() };
  };
  const client = (calls: string) => `import createClient from "openapi-fetch";
import type { paths, components } from "./schema";
const api = createClient<paths>({ baseUrl: "http://gateway.invalid" });
export async function calls(): Promise<void> {
${calls}
}
`;

  test("typed calls compile", () => {
    const r = typecheck(
      client(`  const key = await api.POST("/v1/keys", { body: { name: "ci", monthly_budget_krw: 1000 } });
  const id: string | undefined = key.data?.id;
  const model = await api.GET("/v1/models/{id}", { params: { path: { id: "openai/gpt-4o" } } });
  const provider: string | undefined = model.data?.providers[0]?.id;
  const chat = await api.POST("/v1/chat/completions", { body: { model: "gpt-4o-mini", messages: [{ role: "user", content: "hi" }] } });
  // JSON, or the event stream's text with stream: true.
  const text: string | null | undefined = typeof chat.data === "object" ? chat.data.choices[0]?.message.content : chat.data;
  const err: components["schemas"]["StructuredError"] | undefined = undefined;
  const job = await api.POST("/v1/video/generations", { body: { prompt: "x" } });
  const status: "processing" | "succeeded" | "failed" | "canceled" | undefined = job.data?.status;
  void [id, provider, text, err, status];`),
    );
    expect(r.output).toBe("");
    expect(r.ok).toBe(true);
  });

  test("a wrong call does not compile: unknown path, wrong body type, wrong answer type", () => {
    const wrong = [
      `await api.GET("/v1/no-such-route");`,
      `await api.POST("/v1/keys", { body: { monthly_budget_krw: "a lot" } });`,
      `const n: number | undefined = (await api.GET("/v1/models/{id}", { params: { path: { id: "x" } } })).data?.id;`,
      `await api.GET("/v1/models/{id}", {});`,
    ];
    for (const line of wrong) {
      const r = typecheck(client(`  ${line}`));
      expect([line, r.ok]).toEqual([line, false]);
      // The error is on the call's own line (5), not a broken setup.
      expect(
        r.output
          .trim()
          .split("\n")
          .every((l) => l.includes("client.ts(5,") || l.startsWith(" ")),
      ).toBe(true);
    }
  });
});
