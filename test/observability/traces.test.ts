/**
 * Traces over OTLP/HTTP: a receiver in this process (POST /v1/traces, the exporter's JSON
 * encoding) gets the spans of a streamed call whose first provider fails (a simulator fault
 * directive) and whose second answers. One trace continuing the client's traceparent, the
 * request's root span with the phases and every attempt under it, GenAI attributes with token
 * counts, and each upstream request carrying the traceparent of its attempt's span.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { Glob } from "bun";
import { join, resolve } from "node:path";
import type { TestGateway } from "../harness";
import { chatFetch, proxiedGateway, tenant, user, type RecordingProxy } from "../support/chat";

setDefaultTimeout(30_000);

interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes: { key: string; value: Record<string, unknown> }[];
  status?: { code?: number; message?: string };
}

const attr = (s: OtlpSpan, key: string): unknown => {
  const v = s.attributes.find((a) => a.key === key)?.value;
  if (!v) return undefined;
  const x = v.stringValue ?? v.intValue ?? v.doubleValue ?? v.boolValue;
  return typeof x === "string" && "intValue" in v ? Number(x) : x;
};

describe("OTLP traces", () => {
  const spans: OtlpSpan[] = [];
  const contentTypes = new Set<string>();
  const services = new Set<string>();
  const receiver = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(req) {
      if (req.method !== "POST" || new URL(req.url).pathname !== "/v1/traces")
        return new Response("no", { status: 404 });
      contentTypes.add(req.headers.get("content-type") ?? "");
      const body: any = await req.json();
      for (const rs of body.resourceSpans ?? []) {
        for (const a of rs.resource?.attributes ?? []) if (a.key === "service.name") services.add(a.value.stringValue);
        for (const ss of rs.scopeSpans ?? []) spans.push(...ss.spans);
      }
      return Response.json({});
    },
  });
  let g: TestGateway;
  let proxy: RecordingProxy;

  beforeAll(async () => {
    ({ g, proxy } = await proxiedGateway(["deepseek", "together"], {
      OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${receiver.port}/`,
      OTEL_SERVICE_NAME: "gw-under-test",
    }));
  }, 60_000);
  afterAll(async () => {
    await g?.stop();
    proxy?.stop();
    receiver.stop(true);
  });

  test("a streamed call with a fallback: one trace under the client's, phases and attempts, GenAI attributes, traceparent upstream", async () => {
    const { user: u, key } = await tenant(g);
    await g.admin("PATCH", `/v1/admin/users/${u.id}`, { xborder_training_consent: true });
    const clientTrace = crypto.randomUUID().replaceAll("-", "");
    const clientSpan = clientTrace.slice(0, 16);
    const r = await chatFetch(
      g,
      key.key,
      { model: "deepseek-v3", stream: true, messages: user("trace me [sim:fail@deepseek=503]") },
      { headers: { traceparent: `00-${clientTrace}-${clientSpan}-01` } },
    );
    expect(r.status).toBe(200);
    expect(await r.text()).toContain("[DONE]");
    const mine = () => spans.filter((s) => s.traceId === clientTrace);
    for (let i = 0; i < 100 && !mine().some((s) => s.name === "POST /v1/chat/completions"); i++) {
      await g.gw.deps.tracer!.flush();
      await Bun.sleep(30);
    }
    expect([...contentTypes]).toEqual(["application/json"]);
    expect([...services]).toEqual(["gw-under-test"]);

    const all = mine();
    const root = all.find((s) => s.name === "POST /v1/chat/completions")!;
    expect(root).toBeDefined();
    expect(root.parentSpanId).toBe(clientSpan); // the client's trace continues
    expect(root.kind).toBe(2); // SERVER
    expect(attr(root, "http.request.method")).toBe("POST");
    expect(attr(root, "http.route")).toBe("/v1/chat/completions");
    expect(attr(root, "http.response.status_code")).toBe(200);
    expect(attr(root, "gen_ai.operation.name")).toBe("chat");
    expect(attr(root, "gen_ai.request.model")).toBe("deepseek-v3");
    expect(attr(root, "gen_ai.response.model")).toBe("deepseek-v3");
    expect(attr(root, "gen_ai.system")).toBe("together");
    expect(attr(root, "gen_ai.usage.input_tokens")).toBeGreaterThan(0);
    expect(attr(root, "gen_ai.usage.output_tokens")).toBeGreaterThan(0);
    expect(attr(root, "gateway.key_id")).toBe(key.id);

    // Every other span of the request is a child of its root.
    const children = all.filter((s) => s !== root);
    for (const s of children) expect([s.name, s.parentSpanId]).toEqual([s.name, root.spanId]);
    const names = children.map((s) => s.name);
    for (const n of ["authorize", "hold", "stream", "settle"]) expect(names).toContain(n);

    const attempts = children.filter((s) => s.name === "chat deepseek-v3");
    attempts.sort((a, b) => Number(attr(a, "gateway.attempt")) - Number(attr(b, "gateway.attempt")));
    expect(
      attempts.map((s) => [
        attr(s, "gen_ai.system"),
        attr(s, "gateway.attempt.outcome"),
        attr(s, "http.response.status_code"),
      ]),
    ).toEqual([
      ["deepseek", "retry", 503],
      ["deepseek", "retry", 503],
      ["deepseek", "fallback", 503],
      ["together", "ok", undefined],
    ]);
    for (const s of attempts) {
      expect(s.kind).toBe(3); // CLIENT
      expect(attr(s, "gen_ai.request.model")).toBe("deepseek-v3");
      expect(attr(s, "gen_ai.operation.name")).toBe("chat");
    }
    expect(attempts.slice(0, 3).map((s) => s.status?.code)).toEqual([2, 2, 2]); // ERROR
    expect(attr(attempts[0]!, "error.type")).toBe("transient/overloaded");
    const stream = children.find((s) => s.name === "stream")!;
    expect(attr(stream, "gateway.stream.ending")).toBe("complete");

    // What each upstream saw: the traceparent of its own attempt span, in order.
    const seen = proxy.bodies.filter((b) => b.path.endsWith("/chat/completions")).map((b) => b.traceparent);
    expect(seen).toEqual(attempts.map((s) => `00-${clientTrace}-${s.spanId}-01`));
  });
});

describe("tracing off", () => {
  test("the OpenTelemetry packages are imported by src/http/tracing.ts only, and it only dynamically", async () => {
    const root = resolve(import.meta.dir, "../..");
    const bad: string[] = [];
    for await (const file of new Glob("src/**/*.ts").scan(root)) {
      const text = await Bun.file(join(root, file)).text();
      if (file !== "src/http/tracing.ts" && /from\s+["']@opentelemetry\//.test(text))
        bad.push(`${file}: @opentelemetry`);
      if (/^\s*import[^;]*from\s+["'][./]*(http\/)?tracing["']/m.test(text))
        bad.push(`${file}: static import of tracing`);
    }
    expect(bad).toEqual([]);
  });
});
