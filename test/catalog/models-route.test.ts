import { describe, expect, test } from "bun:test";
import { Elysia } from "elysia";
import { modelsRoutes, type ModelList, type ModelView } from "../../src/http/routes/models";
import { GatewayError } from "../../src/core/errors";
import { model, mutated, offering, snapshotOf } from "./helpers";

const snapshot = snapshotOf();
const app = new Elysia().use(modelsRoutes(() => snapshot));
const get = (path: string) => app.handle(new Request(`http://localhost${path}`));

async function list(): Promise<ModelList> {
  const res = await get("/v1/models");
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toContain("application/json");
  return (await res.json()) as ModelList;
}

describe("GET /v1/models", () => {
  test("OpenAI list shape with catalog extensions", async () => {
    const body = await list();
    expect(body.object).toBe("list");
    const mini = body.data.find((m) => m.id === "gpt-4o-mini")!;
    expect(mini).toMatchObject({
      id: "gpt-4o-mini",
      object: "model",
      owned_by: "openai",
      vendor_id: "openai/gpt-4o-mini",
      modality: "text",
      kind: "leaf",
    });
    expect(typeof mini.created).toBe("number");
    expect(mini.providers).toEqual([
      {
        id: "openai",
        available: true,
        circuit: "closed",
        context_length: 128000,
        max_output: 16384,
        trains_on_data: false,
        // A web-search price, where the catalog has one, is checked in "long-context tiers and web search" below.
        pricing: expect.objectContaining({ input: 0.15, output: 0.6, cached_input: 0.075, cache_write: null }),
        service_tiers: { priority: { input: 0.25, output: 1, cached_input: 0.125, cache_write: null } },
        lifecycle: "active",
        deprecated_at: null,
        retires_at: null,
        successor: null,
      },
    ]);
    const sonnet = body.data.find((m) => m.id === "claude-sonnet-4-5")!;
    expect(sonnet.providers[0]!.pricing).toEqual(
      expect.objectContaining({ input: 3, output: 15, cached_input: 0.3, cache_write: 3.75, cache_write_1h: 6 }),
    );
  });

  test("lists every callable model: leaves of each modality and routing parents, no retired ids", async () => {
    const body = await list();
    const ids = body.data.map((m) => m.id);
    for (const id of [
      "gpt-4o",
      "deepseek-v3",
      "llama-3.3-70b",
      "text-embedding-3-small",
      "veo-3",
      "kling-v3",
      "benchmark_smart",
      "perfect",
    ]) {
      expect(ids).toContain(id);
    }
    expect(ids).not.toContain("pleum-smart");
    expect(ids).not.toContain("pleum-perfect");
    const llama = body.data.find((m) => m.id === "llama-3.3-70b")!;
    expect(llama.providers.map((p) => [p.id, p.trains_on_data])).toEqual([
      ["together", true],
      ["groq", false],
    ]);
    const parent = body.data.find((m) => m.id === "benchmark_smart")!;
    expect(parent.kind).toBe("parent");
    expect(parent.providers).toEqual([]);
    expect(parent.candidates!.length).toBeGreaterThan(0);
  });

  test("embedding models carry their vector size and input price; other models no dimensions", async () => {
    const body = await list();
    const emb = body.data.filter((m) => m.modality === "embedding");
    expect(emb.map((m) => [m.id, m.dimensions, m.providers.map((p) => [p.id, p.pricing!.input])])).toEqual([
      ["text-embedding-3-small", 1536, [["openai", 0.02]]],
      ["text-embedding-3-large", 3072, [["openai", 0.13]]],
      ["gemini-embedding-001", 3072, [["google", 0.15]]],
      ["gemini-embedding-2", 3072, [["google", 0.2]]],
    ]);
    expect(body.data.find((m) => m.id === "gpt-4o")!.dimensions).toBeUndefined();
  });

  test("video models carry KRW prices per second by resolution (G Omni per 1k output tokens)", async () => {
    const body = await list();
    const veo = body.data.find((m) => m.id === "veo-3") as ModelView;
    expect(veo.modality).toBe("video");
    expect(veo.family).toBe("G");
    expect(veo.providers).toEqual([
      {
        id: "veo",
        available: true,
        circuit: "closed",
        context_length: null,
        max_output: null,
        trains_on_data: false,
        pricing: null,
        lifecycle: "active",
        deprecated_at: null,
        retires_at: null,
        successor: null,
      },
    ]);
    expect(Object.keys(veo.pricing_krw_per_second!)).toEqual(["480p", "720p", "1080p", "1440p", "4k"]);
    for (const v of Object.values(veo.pricing_krw_per_second!)) expect(Number.isInteger(v)).toBe(true);
    const omni = body.data.find((m) => m.id === "veo-3-omni")!;
    expect(omni.pricing_krw_per_second).toBeUndefined();
    expect(omni.pricing_krw_per_1k_output_tokens).toBeGreaterThan(0);
  });

  test("GET /v1/models/{id} takes the short or vendor form; unknown is 404", async () => {
    const byShort = await get("/v1/models/gpt-4o");
    expect(byShort.status).toBe(200);
    expect(((await byShort.json()) as ModelView).id).toBe("gpt-4o");
    const byVendor = await get("/v1/models/meta-llama/llama-3.3-70b");
    expect(((await byVendor.json()) as ModelView).id).toBe("llama-3.3-70b");
    // Errors are thrown for the app's single error handler; bare Elysia shows them as 500s
    // unless a handler maps them, so check the thrown error via onError here.
    let thrown: unknown;
    const probe = new Elysia()
      .onError(({ error }) => {
        thrown = error;
        return new Response(null, { status: (error as GatewayError).status ?? 500 });
      })
      .use(modelsRoutes(() => snapshot));
    const res = await probe.handle(new Request("http://localhost/v1/models/nope"));
    expect(res.status).toBe(404);
    expect((thrown as GatewayError).errorCode).toBe("not_found");
  });

  test("no snapshot: the catalog_snapshot_stale error reaches the error handler", async () => {
    let thrown: unknown;
    const probe = new Elysia()
      .onError(({ error }) => {
        thrown = error;
        return new Response(null, { status: 503 });
      })
      .use(
        modelsRoutes(() => {
          throw new GatewayError("catalog_snapshot_stale");
        }),
      );
    const res = await probe.handle(new Request("http://localhost/v1/models"));
    expect(res.status).toBe(503);
    expect((thrown as GatewayError).errorCode).toBe("catalog_snapshot_stale");
  });

  test("the body is built once per snapshot", async () => {
    const a = await (await get("/v1/models")).text();
    const b = await (await get("/v1/models")).text();
    expect(a).toBe(b);
  });

  test("long-context tiers and the web search price are shown in USD", async () => {
    const text = mutated((d) => {
      const p = offering(d, "claude-sonnet-4-5").pricing;
      for (const key of Object.keys(p))
        if (!["input", "output", "cached_input", "cache_write"].includes(key)) delete p[key];
      p.tiers = [{ above_input_tokens: 200000, input: 6, output: 22.5, cached_input: 0.6, cache_write: 7.5 }];
      p.web_search_per_1k = 10;
    });
    const own = new Elysia().use(modelsRoutes(() => snapshotOf(text)));
    const body = (await (await own.handle(new Request("http://localhost/v1/models"))).json()) as ModelList;
    expect(body.data.find((m) => m.id === "claude-sonnet-4-5")!.providers[0]!.pricing).toEqual({
      input: 3,
      output: 15,
      cached_input: 0.3,
      cache_write: 3.75,
      tiers: [{ above_input_tokens: 200000, input: 6, output: 22.5, cached_input: 0.6, cache_write: 7.5 }],
      web_search_per_1k: 10,
    });
  });

  test("every entry carries its lifecycle, by the route's day", async () => {
    const text = mutated((d) => {
      Object.assign(model(d, "gpt-4o"), {
        deprecated_at: "2026-06-01",
        retires_at: "2026-11-30",
        successor: "gpt-4o-mini",
        aliases: ["gpt-4o-2024-08-06"],
      });
      d.models.push({ ...model(d, "perfect"), id: "solo", vendor_id: "pleum/solo", candidates: ["gpt-4o"] });
    });
    const snap = snapshotOf(text);
    const on = (day: string) =>
      new Elysia().use(modelsRoutes(() => snap, undefined, null, { today: () => day, simulated: () => false }));
    const view = async (day: string) =>
      (await (await on(day).handle(new Request("http://localhost/v1/models/gpt-4o-2024-08-06"))).json()) as ModelView;
    const parent = async (day: string) =>
      ((await (await on(day).handle(new Request("http://localhost/v1/models/solo"))).json()) as ModelView).available;
    for (const [day, stage, available] of [
      ["2026-05-31", "active", true],
      ["2026-06-01", "deprecated", true],
      ["2026-11-30", "retired", false],
    ] as const) {
      // A routing parent whose only candidate is retired cannot be answered either.
      expect([day, await parent(day)]).toEqual([day, available]);
      const v = await view(day);
      expect([v.id, v.lifecycle, v.available, v.deprecated_at, v.retires_at, v.successor, v.aliases]).toEqual([
        "gpt-4o",
        stage,
        available,
        "2026-06-01",
        "2026-11-30",
        "gpt-4o-mini",
        ["gpt-4o-2024-08-06"],
      ]);
    }
  });
});
