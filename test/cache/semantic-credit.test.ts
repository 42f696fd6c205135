/**
 * A semantic-mode key's similarity lookup embeds the prompt: an upstream call the gateway pays
 * for. It runs only once the call's credit hold is placed, so an account that cannot pay for
 * the call never makes the gateway pay for an embedding. Exact matching
 * reads the database only and still answers before any hold.
 */
import { beforeEach, describe, expect, setDefaultTimeout, test } from "bun:test";
import { dbKinds, suiteGateway, type TestGateway } from "../harness";
import { chat, chatFetch, eventually, fastUser, money, usageOf, user } from "../support/chat";

setDefaultTimeout(30_000);

/** Calls the simulator's embeddings endpoint received since the last reset. */
function embeddingCalls(g: TestGateway): number {
  let n = 0;
  for (const routes of Object.values(g.gw.sim!.stats().calls))
    for (const [route, c] of Object.entries(routes)) if (route.includes("/embeddings")) n += c;
  return n;
}

const QUESTION = "What is the capital city of France and what is its population?";
const PARAPHRASE = "What is the capital of France and what is its population?";

for (const kind of await dbKinds()) {
  describe(`semantic cache and credits (${kind})`, () => {
    const gateway = suiteGateway({ db: kind });
    let g: TestGateway;
    beforeEach(() => {
      g = gateway();
    });

    test("an unfunded account's semantic-mode key gets 402 and no embedding is made", async () => {
      const u = await fastUser(g);
      const k = await g.newKey(u, { response_cache_mode: "semantic" });
      g.gw.sim!.reset();
      // Texts of their own: the cache remembers recent embeddings for a minute.
      const json = await chat(g, k.key, {
        model: "gpt-4o-mini",
        messages: user("Which is the tallest mountain in Japan, and how high is it?"),
      });
      expect(json.status).toBe(402);
      expect(json.body.detail.error).toBe("insufficient_credits");
      const stream = await chatFetch(g, k.key, {
        model: "gpt-4o-mini",
        messages: user("Which is the highest mountain in Japan, and how tall is it?"),
        stream: true,
      });
      expect(stream.status).toBe(402);
      await stream.text();
      const responses = await g.call("POST", "/v1/responses", {
        token: k.key,
        body: { model: "gpt-4o-mini", input: "Name the longest river of Korea." },
      });
      expect(responses.status).toBe(402);
      expect(embeddingCalls(g)).toBe(0);
      expect(g.gw.sim!.stats().total).toBe(0);
      expect(await money(g, u.id)).toEqual({ balance: 0n, held: 0n });
    });

    test("a key over its monthly budget is refused before the embedding too", async () => {
      const u = await fastUser(g, { creditKrw: 100 });
      const k = await g.newKey(u, { response_cache_mode: "semantic", monthly_budget_krw: 0 });
      g.gw.sim!.reset();
      const r = await chat(g, k.key, { model: "gpt-4o-mini", messages: user("How many moons does Jupiter have?") });
      expect(r.status).toBe(402);
      expect(embeddingCalls(g)).toBe(0);
    });

    test("a BYOK key (which holds nothing) matches exactly only: no embedding at the gateway's cost", async () => {
      const u = await fastUser(g);
      const byok = await g.admin("POST", `/v1/admin/users/${u.id}/byok-keys`, {
        provider: "openai",
        provider_api_key: "sk-users-own",
      });
      expect(byok.status).toBe(201);
      const patched = await g.call("PATCH", `/v1/keys/${byok.body.id}`, {
        token: u.jwt,
        body: { response_cache_mode: "semantic" },
      });
      expect(patched.body.response_cache_mode).toBe("semantic");
      g.gw.sim!.reset();
      const first = await chat(g, byok.body.key, {
        model: "gpt-4o-mini",
        messages: user("Which planet has the most moons?"),
      });
      expect(first.status).toBe(200);
      // The entry is stored behind the answer.
      const stored = async () =>
        Number(
          (
            await g.gw.deps.db.query<{ n: string }>(
              "select count(*)::text as n from response_cache where key_id = $1",
              [byok.body.id],
            )
          )[0]!.n,
        ) >= 1;
      expect(await eventually(stored)).toBe(true);
      const again = await chat(g, byok.body.key, {
        model: "gpt-4o-mini",
        messages: user("Which planet has the most moons?"),
      });
      expect(again.body.cached).toBe(true);
      const paraphrase = await chat(g, byok.body.key, {
        model: "gpt-4o-mini",
        messages: user("Which planet has the most moons now?"),
      });
      expect(paraphrase.body.cached).toBe(false);
      expect(embeddingCalls(g)).toBe(0);
    });

    test("a funded account's paraphrase hit embeds after the hold, then gives the hold back and costs 0", async () => {
      const u = await fastUser(g, { creditKrw: 100 });
      const k = await g.newKey(u, { response_cache_mode: "semantic" });
      const first = await chat(g, k.key, { model: "gpt-4o-mini", messages: user(QUESTION) });
      expect(first.status).toBe(200);
      const stored = async () =>
        Number(
          (
            await g.gw.deps.db.query<{ n: string }>(
              "select count(*)::text as n from response_cache where key_id = $1",
              [k.id],
            )
          )[0]!.n,
        ) >= 1;
      expect(await eventually(stored)).toBe(true);
      const before = await money(g, u.id);
      g.gw.sim!.reset();
      const hit = await chat(g, k.key, { model: "gpt-4o-mini", messages: user(PARAPHRASE) });
      expect(hit.status).toBe(200);
      expect(hit.body.cached).toBe(true);
      expect(hit.body.cost.krw).toBe(0);
      expect(embeddingCalls(g)).toBe(1);
      expect(g.gw.sim!.stats().total).toBe(1);
      expect(await money(g, u.id)).toEqual(before);
      const ev = await usageOf(g, hit.headers.get("x-request-id")!);
      expect(ev.cached).toBe(true);
      expect(BigInt(ev.cost_micro)).toBe(0n);
      // Exact matching needs no embedding and no credits: the account emptied still gets it.
      await g.gw.deps.db.query("update users set balance_micro = 0 where id = $1", [u.id]);
      g.gw.sim!.reset();
      const exact = await chat(g, k.key, { model: "gpt-4o-mini", messages: user(QUESTION) });
      expect([exact.status, exact.body.cached]).toEqual([200, true]);
      const paraphrase = await chat(g, k.key, { model: "gpt-4o-mini", messages: user(PARAPHRASE) });
      expect(paraphrase.status).toBe(402);
      expect(g.gw.sim!.stats().total).toBe(0);
      expect((await money(g, u.id)).held).toBe(0n);
    });
  });
}
