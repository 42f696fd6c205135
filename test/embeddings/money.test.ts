/**
 * Money on the embeddings path, on PostgreSQL and PGlite, checked in SQL: an answered call is
 * charged once, exactly its input tokens at the catalog's price (0.1 KRW at least), with one
 * usage event of modality `embedding`; a 4xx, an upstream failure and a refused hold charge
 * nothing and call no provider (or release the whole hold); retries and fallback follow the
 * chat rules; the calls reach the statistics rollups as their own modality.
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { formatHashFile } from "../../src/core/catalog/verify";
import { runRollup } from "../../src/core/stats";
import { RollupRepo } from "../../src/db/repos/rollups";
import { dbKinds, startTestGateway, type TestGateway } from "../harness";
import { errorCode, money, tenant, usageOf } from "../support/chat";
import { mutated, offering } from "../catalog/helpers";
import { embed, simEmbedCalls } from "./helpers";

setDefaultTimeout(30_000);

/** Input prices in micro-USD per million tokens (src/core/catalog/catalog.json); FX 1400 KRW/USD. */
const INPUT_PRICE: Record<string, bigint> = {
  "text-embedding-3-small": 20_000n,
  "text-embedding-3-large": 130_000n,
  "gemini-embedding-001": 150_000n,
  "text-embedding-3-small@groq": 40_000n,
};
const FX_MILLI = 1_400_000n;
const expectedMicro = (model: string, tokens: number) => {
  const micro = (BigInt(tokens) * INPUT_PRICE[model]! * FX_MILLI + 999_999_999n) / 1_000_000_000n;
  return micro < 100_000n ? 100_000n : micro;
};

/** The account's ledger, as rows: charges, usage events, open holds. */
async function books(g: TestGateway, userId: string) {
  await g.gw.settlements.quiesce(userId);
  const [r] = await g.gw.deps.db.query<{ charges: number; charged: string; events: number; open: number }>(
    `select (select count(*)::int from ledger_entries where user_id = $1 and kind = 'charge') as charges,
            (select coalesce(-sum(amount_micro), 0)::text from ledger_entries where user_id = $1 and kind = 'charge') as charged,
            (select count(*)::int from usage_events where user_id = $1) as events,
            (select count(*)::int from holds where user_id = $1 and status = 'open') as open`,
    [userId],
  );
  return { charges: r!.charges, charged: BigInt(r!.charged), events: r!.events, open: r!.open };
}

/** A catalog where text-embedding-3-small is also offered by groq (OpenAI protocol), for fallback. */
function fallbackCatalog(dir: string): string {
  const text = mutated((d) => {
    d.offerings.push({
      ...offering(d, "text-embedding-3-small"),
      provider: "groq",
      pricing: { input: 0.04, output: 0, cached_input: null, cache_write: null },
    });
  });
  const path = join(dir, "catalog.json");
  writeFileSync(path, text);
  writeFileSync(join(dir, "catalog.sha256"), formatHashFile(text));
  return path;
}

/**
 * The gateway's own count of a text (the hold's rule): ⌈ASCII characters / 3⌉ plus one token
 * for every other UTF-16 unit (a Hangul syllable one, an emoji's surrogate pair two).
 */
const holdRule = (t: string) => {
  let other = 0;
  for (let i = 0; i < t.length; i++) if (t.charCodeAt(i) > 0x7f) other++;
  return Math.ceil((t.length - other) / 3) + other;
};

const LONG = "Embeddings turn text into vectors that can be compared. ".repeat(70); // 3,920 characters

for (const kind of await dbKinds()) {
  describe(`embeddings money on ${kind}`, () => {
    let g: TestGateway;
    let dir: string;
    beforeAll(async () => {
      dir = mkdtempSync(join(tmpdir(), "emb-catalog-"));
      g = await startTestGateway({
        db: kind,
        env: { CATALOG_PATH: fallbackCatalog(dir), STATS_ROLLUP_INTERVAL_MS: "0" },
      });
    }, 60_000);
    afterAll(async () => {
      await g?.stop();
      rmSync(dir, { recursive: true, force: true });
    });

    for (const model of ["gemini-embedding-001", "text-embedding-3-large"]) {
      test(`${model}: charged once, exactly the input tokens at the catalog price`, async () => {
        const { key, user } = await tenant(g, 100);
        const input = [LONG, LONG + " again", "short"];
        const r = await embed(g, key.key, { model, input });
        expect(r.status).toBe(200);
        const tokens = r.body.usage.prompt_tokens;
        // OpenAI counts (the simulator: ~4 characters a token); Gemini counts none: the hold's rule.
        const count = model.startsWith("gemini") ? holdRule : (t: string) => Math.ceil(t.length / 4);
        expect(tokens).toBe(input.reduce((n, t) => n + count(t), 0));
        const want = expectedMicro(model, tokens);
        expect(want).toBeGreaterThan(100_000n); // above the minimum: the price is what is checked
        expect(await money(g, user.id)).toEqual({ balance: 100_000_000n - want, held: 0n });
        expect(await books(g, user.id)).toEqual({ charges: 1, charged: want, events: 1, open: 0 });
        expect(Number(r.headers.get("x-cost-krw"))).toBe(Math.round(Number(want) / 1e6));
        expect(Number(r.headers.get("x-cost-usd"))).toBeCloseTo(Number(want) / 1e6 / 1400, 6);
        const ev = await usageOf(g, r.headers.get("x-request-id")!);
        expect(ev).toMatchObject({
          model,
          modality: "embedding",
          api: "embeddings",
          status: 200,
          prompt_tokens: tokens,
          completion_tokens: 0,
          cached: false,
        });
        expect(ev.provider).toBe(model.startsWith("gemini") ? "google" : "openai");
        expect(BigInt(ev.cost_micro)).toBe(want);
      });
    }

    test("Gemini: Korean and emoji are charged the hold's own estimate, one token per non-ASCII unit", async () => {
      const { key, user } = await tenant(g, 100);
      const korean = "임베딩은 텍스트를 비교할 수 있는 벡터로 바꿉니다. ".repeat(40);
      const emoji = "🚀🌊📄✨🙂".repeat(120);
      const input = [korean, emoji, "mixed 한국어 text 🎉"];
      const r = await embed(g, key.key, { model: "gemini-embedding-001", input });
      expect(r.status).toBe(200);
      const tokens = input.reduce((n, t) => n + holdRule(t), 0);
      // Honest at least: every Hangul syllable and every emoji is a token or more for a real tokenizer.
      const syllablesAndEmoji = input.reduce((n, t) => n + [...t].filter((c) => c.codePointAt(0)! > 0x7f).length, 0);
      expect(tokens).toBeGreaterThanOrEqual(syllablesAndEmoji);
      // The old count, ⌈UTF-16 units / 4⌉, was well below it.
      expect(input.reduce((n, t) => n + Math.ceil(t.length / 4), 0)).toBeLessThan(tokens / 2);
      expect(r.body.usage).toEqual({ prompt_tokens: tokens, total_tokens: tokens });
      const want = expectedMicro("gemini-embedding-001", tokens);
      expect(want).toBeGreaterThan(100_000n);
      expect(await books(g, user.id)).toEqual({ charges: 1, charged: want, events: 1, open: 0 });
      expect(await money(g, user.id)).toEqual({ balance: 100_000_000n - want, held: 0n });
      const ev = await usageOf(g, r.headers.get("x-request-id")!);
      expect([ev.prompt_tokens, BigInt(ev.cost_micro)]).toEqual([tokens, want]);
    });

    test("a tiny call pays the 0.1 KRW minimum, as chat does", async () => {
      const { key, user } = await tenant(g, 10);
      const r = await embed(g, key.key, { model: "text-embedding-3-small", input: "hi" });
      expect(r.status).toBe(200);
      expect(await books(g, user.id)).toEqual({ charges: 1, charged: 100_000n, events: 1, open: 0 });
    });

    test("a reused X-Request-Id is refused (409) and the call charged once", async () => {
      const { key, user } = await tenant(g, 10);
      const rid = crypto.randomUUID();
      const a = await embed(g, key.key, { model: "text-embedding-3-small", input: "once" }, { "x-request-id": rid });
      const b = await embed(g, key.key, { model: "text-embedding-3-small", input: "once" }, { "x-request-id": rid });
      expect([a.status, b.status]).toEqual([200, 409]);
      expect(errorCode(b.body)).toBe("request_id_reused");
      expect(await books(g, user.id)).toEqual({ charges: 1, charged: 100_000n, events: 1, open: 0 });
    });

    test("client errors move no money and call no provider", async () => {
      const { key, user } = await tenant(g, 10);
      g.gw.sim!.reset();
      const cases: [unknown, number, string][] = [
        [{ model: "text-embedding-3-small", input: "" }, 422, "validation_error"],
        [{ model: "text-embedding-3-small", input: [] }, 422, "validation_error"],
        [{ model: "text-embedding-3-small", input: ["fine", ""] }, 422, "validation_error"],
        [{ model: "text-embedding-3-small", input: [[1], []] }, 422, "validation_error"],
        [{ model: "gpt-4o-mini", input: "chat model" }, 400, "model_not_found"],
        [{ model: "gemini-embedding-001", input: [1, 2, 3] }, 400, "unsupported_parameter"],
        [{ model: "text-embedding-3-small", input: "x", dimensions: 4096 }, 400, "unsupported_parameter"],
      ];
      for (const [body, status, code] of cases) {
        const r = await embed(g, key.key, body);
        // A 422 carries the validation list in `detail` and its code in the compatible `error`.
        expect([JSON.stringify(body), r.status, r.body.error.code]).toEqual([JSON.stringify(body), status, code]);
        if (status === 422) expect(r.body.detail[0].loc.slice(0, 2)).toEqual(["body", "input"]);
      }
      expect(simEmbedCalls(g)).toEqual({});
      expect(await money(g, user.id)).toEqual({ balance: 10_000_000n, held: 0n });
      expect(await books(g, user.id)).toEqual({ charges: 0, charged: 0n, events: 0, open: 0 });
    });

    test("no credits: 402 before any provider is called", async () => {
      const { key, user } = await tenant(g, 0);
      g.gw.sim!.reset();
      const r = await embed(g, key.key, { model: "text-embedding-3-small", input: "broke" });
      expect(r.status).toBe(402);
      expect(errorCode(r.body)).toBe("insufficient_credits");
      expect(simEmbedCalls(g)).toEqual({});
      expect(await books(g, user.id)).toEqual({ charges: 0, charged: 0n, events: 0, open: 0 });
    });

    test("the key's monthly token limit counts embeddings input: 402 past it", async () => {
      const { key, user } = await tenant(g, 10, { monthly_token_limit: 100 });
      const r = await embed(g, key.key, { model: "text-embedding-3-small", input: LONG });
      expect(r.status).toBe(402);
      expect(errorCode(r.body)).toBe("monthly_token_quota_exceeded");
      expect(await books(g, user.id)).toEqual({ charges: 0, charged: 0n, events: 0, open: 0 });
    });

    test("an upstream that keeps failing: 3 calls, 502 upstream_unavailable, the hold released, nothing charged", async () => {
      const { key, user } = await tenant(g, 10);
      g.gw.sim!.reset();
      const r = await embed(g, key.key, { model: "gemini-embedding-001", input: ["down [sim:fail=503]", "b"] });
      expect(r.status).toBe(502);
      expect(errorCode(r.body)).toBe("upstream_unavailable");
      expect(r.body.detail.retryable).toBe(true);
      expect(simEmbedCalls(g)).toEqual({ google: 3 });
      expect(await money(g, user.id)).toEqual({ balance: 10_000_000n, held: 0n });
      expect(await books(g, user.id)).toEqual({ charges: 0, charged: 0n, events: 1, open: 0 });
      const ev = await usageOf(g, r.headers.get("x-request-id")!);
      expect(ev).toMatchObject({ modality: "embedding", status: 502, provider: null });
      expect(BigInt(ev.cost_micro)).toBe(0n);
    });

    test("a rejection is not retried: one call, 502 upstream_request_rejected, nothing charged", async () => {
      const { key, user } = await tenant(g, 10);
      g.gw.sim!.reset();
      const r = await embed(g, key.key, { model: "text-embedding-3-small", input: "bad [sim:fail=400]" });
      expect(r.status).toBe(502);
      expect(errorCode(r.body)).toBe("upstream_request_rejected");
      expect(simEmbedCalls(g)).toEqual({ openai: 1 });
      expect((await books(g, user.id)).charges).toBe(0);
    });

    test("two transient failures, then an answer on the third call: charged once", async () => {
      const { key, user } = await tenant(g, 10);
      g.gw.sim!.reset();
      const r = await embed(g, key.key, { model: "text-embedding-3-large", input: "flaky [sim:fail=503x2]" });
      expect(r.status).toBe(200);
      expect(simEmbedCalls(g)).toEqual({ openai: 3 });
      expect(await books(g, user.id)).toEqual({ charges: 1, charged: 100_000n, events: 1, open: 0 });
    });

    test("fallback: the first provider fails three times, the next one answers and its price is charged", async () => {
      const { key, user } = await tenant(g, 100);
      g.gw.sim!.reset();
      const input = [LONG, "fallback please [sim:fail@openai=503]"];
      const r = await embed(g, key.key, { model: "text-embedding-3-small", input });
      expect(r.status).toBe(200);
      expect(simEmbedCalls(g)).toEqual({ openai: 3, groq: 1 });
      const want = expectedMicro("text-embedding-3-small@groq", r.body.usage.prompt_tokens);
      expect(await books(g, user.id)).toEqual({ charges: 1, charged: want, events: 1, open: 0 });
      expect((await usageOf(g, r.headers.get("x-request-id")!)).provider).toBe("groq");
    });

    test("a pinned provider gets no fallback", async () => {
      const { key, user } = await tenant(g, 10);
      g.gw.sim!.reset();
      const r = await embed(g, key.key, {
        model: "text-embedding-3-small@openai",
        input: "pinned [sim:fail@openai=503]",
      });
      expect(r.status).toBe(502);
      expect(simEmbedCalls(g)).toEqual({ openai: 3 });
      expect((await books(g, user.id)).charges).toBe(0);
    });

    test("the statistics rollup folds embeddings as their own modality", async () => {
      const { key } = await tenant(g, 10);
      for (const input of ["stats one", "stats two"])
        expect(
          (await embed(g, key.key, { model: "gemini-embedding-001", input }, { "X-Title": "emb-stats-app" })).status,
        ).toBe(200);
      await g.gw.settlements.quiesce();
      await runRollup(new RollupRepo(g.gw.deps.db, { accountCap: 1 }), { limit: 10_000, wait: true });
      const rows = await g.gw.deps.db.query<{ modality: string; calls: number }>(
        "select modality, sum(calls)::int as calls from stats_model_hourly where model = 'gemini-embedding-001' and success group by modality",
      );
      expect(rows.map((r) => r.modality)).toEqual(["embedding"]);
      expect(rows[0]!.calls).toBeGreaterThanOrEqual(2);
      const apps = await g.gw.deps.db.query<{ modality: string; calls: number }>(
        "select modality, sum(calls)::int as calls from stats_app_hourly where app = 'emb-stats-app' group by modality",
      );
      expect(apps).toEqual([{ modality: "embedding", calls: 2 }]);
    });
  });
}
