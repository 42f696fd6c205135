/**
 * A vendor that answers 200 with a body of the wrong shape (a number where its text belongs, a
 * string of tokens, a list that is a string) fails its wire check: the call is retried and
 * fallen back like a 5xx, the client gets the specification's upstream error, and no money
 * moves (nothing charged, the hold released; checked in SQL). A fake vendor on a real socket
 * plays every configured provider; the simulator plays the others.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { dbKinds, startTestGateway, type TestGateway, type TestUser } from "../harness";
import { chat, fastUser, user } from "../support/chat";

setDefaultTimeout(60_000);

/** What the fake vendor answers, by path: each one valid JSON, each one the wrong shape. */
function malformed(path: string): unknown {
  if (path === "/v1/chat/completions")
    return {
      id: "c1",
      choices: [{ message: { content: 42 }, finish_reason: "stop" }],
      usage: { prompt_tokens: "12", completion_tokens: 3 },
    };
  if (path === "/v1/embeddings") return { data: [{ index: 0, embedding: "AAAAAA==" }], usage: { prompt_tokens: 2 } };
  if (path === "/v1/messages")
    return { id: "m1", content: "hello", stop_reason: "end_turn", usage: { input_tokens: 3, output_tokens: 2 } };
  if (path.endsWith(":generateContent"))
    return { candidates: [{ content: { parts: [{ text: 7 }] }, finishReason: "STOP" }] };
  if (path.endsWith(":predictLongRunning")) return { name: 42 };
  if (path.startsWith("/res/v1/web/search")) return { web: { results: "none" } };
  return { unexpected: path };
}

const calls = new Map<string, number>();
const vendor = Bun.serve({
  port: 0,
  hostname: "127.0.0.1",
  async fetch(req) {
    const path = new URL(req.url).pathname;
    await req.text();
    calls.set(path, (calls.get(path) ?? 0) + 1);
    return Response.json(malformed(path));
  },
});
afterAll(() => vendor.stop(true));
const base = `http://127.0.0.1:${vendor.port}`;

const countOf = (path: string) => calls.get(path) ?? 0;

/** The account's money and every trace of a charge (held, charges, charged usage). */
async function moneyOf(g: TestGateway, userId: string) {
  await g.gw.settlements.quiesce(userId);
  const [u] = await g.gw.deps.db.query<{ b: string; h: string }>(
    "select balance_micro::text as b, held_micro::text as h from users where id = $1",
    [userId],
  );
  const [c] = await g.gw.deps.db.query<{ n: string }>(
    "select count(*)::text as n from ledger_entries where user_id = $1 and kind = 'charge'",
    [userId],
  );
  const [e] = await g.gw.deps.db.query<{ n: string }>(
    "select count(*)::text as n from usage_events where user_id = $1 and cost_micro <> 0",
    [userId],
  );
  const [h] = await g.gw.deps.db.query<{ n: string }>(
    "select count(*)::text as n from holds where user_id = $1 and status = 'open'",
    [userId],
  );
  return { balance: u!.b, held: u!.h, charges: Number(c!.n), chargedEvents: Number(e!.n), openHolds: Number(h!.n) };
}

for (const kind of await dbKinds()) {
  describe(`vendor answers of the wrong shape on ${kind}`, () => {
    let g: TestGateway;
    let u: TestUser;
    let key: string;
    let start: Awaited<ReturnType<typeof moneyOf>>;
    beforeAll(async () => {
      g = await startTestGateway({
        db: kind,
        env: {
          VIDEO_POLL_WORKERS: "0",
          STATS_ROLLUP_INTERVAL_MS: "0",
          ...Object.fromEntries(
            ["OPENAI", "ANTHROPIC", "GOOGLE", "DEEPSEEK", "VEO", "BRAVE"].flatMap((p) => [
              [`${p}_API_KEY`, `${p.toLowerCase()}-test-credential`],
              [`${p}_BASE_URL`, base],
            ]),
          ),
        },
      });
      u = await fastUser(g, { creditKrw: 200_000 });
      key = (await g.newKey(u)).key;
      start = await moneyOf(g, u.id);
    });
    afterAll(async () => {
      await g?.stop();
    });

    for (const [model, path] of [
      ["gpt-4o-mini", "/v1/chat/completions"],
      ["claude-haiku-4-5", "/v1/messages"],
      ["gemini-2.5-flash", "/v1beta/models/gemini-2.5-flash:generateContent"],
    ] as const) {
      test(`${model}: retried like a 5xx, then 502 upstream_unavailable; nothing charged, the hold released`, async () => {
        const before = countOf(path);
        const r = await chat(g, key, { model, messages: user("shape") });
        expect(r.status).toBe(502);
        expect(r.body.detail).toMatchObject({ error: "upstream_unavailable", retryable: true });
        expect(JSON.stringify(r.body)).not.toContain("wire check");
        expect(countOf(path) - before).toBe(3); // one call and two retries, as for a 5xx
        expect(await moneyOf(g, u.id)).toEqual(start);
      });
    }

    test("a bad answer falls back to the next provider, which answers and alone is charged", async () => {
      // Together trains on data: its offerings need the account's consent.
      expect((await g.admin("PATCH", `/v1/admin/users/${u.id}`, { xborder_training_consent: true })).status).toBe(200);
      const before = countOf("/v1/chat/completions");
      const r = await chat(g, key, {
        model: "deepseek-v3",
        messages: user("fallback"),
        provider: { order: ["deepseek", "together"] },
      });
      expect(r.status).toBe(200);
      expect(r.body.provider).toBe("together");
      expect(countOf("/v1/chat/completions") - before).toBe(3);
      const [event] = await g.gw.deps.db.query<{ provider: string; status: number }>(
        "select provider, status from usage_events where user_id = $1 and model = 'deepseek-v3'",
        [u.id],
      );
      expect(event).toEqual({ provider: "together", status: 200 });
      start = await moneyOf(g, u.id);
      expect(start.charges).toBe(1);
      expect(start.held).toBe("0");
    });

    test("embeddings: 502 upstream_unavailable, nothing charged", async () => {
      const r = await g.call("POST", "/v1/embeddings", {
        token: key,
        body: { model: "text-embedding-3-small", input: "shape" },
      });
      expect(r.status).toBe(502);
      expect(r.body.detail.error).toBe("upstream_unavailable");
      expect(await moneyOf(g, u.id)).toEqual(start);
    });

    test("web search: the search's own 502, before the model is called; nothing charged", async () => {
      const model = countOf("/v1/chat/completions");
      const r = await chat(g, key, { model: "gpt-4o-mini", messages: user("search this"), plugins: [{ id: "web" }] });
      expect(r.status).toBe(502);
      expect(r.body.detail).toMatchObject({ error: "upstream_unavailable", providers: ["brave"] });
      expect(countOf("/v1/chat/completions")).toBe(model);
      expect(await moneyOf(g, u.id)).toEqual(start);
    });

    test("video submit: 502 upstream_unavailable, no job to poll, the hold released", async () => {
      const r = await g.call("POST", "/v1/video/generations", {
        token: key,
        body: { model: "veo-3", prompt: "a wave", duration_seconds: 4 },
      });
      expect(r.status).toBe(502);
      expect(r.body.detail).toMatchObject({ error: "upstream_unavailable", providers: ["veo"] });
      expect(await moneyOf(g, u.id)).toEqual(start);
    });
  });
}
