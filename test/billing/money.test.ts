/**
 * Money on the chat path, on PostgreSQL and PGlite: the hold (sized from the input estimate
 * and max_tokens) and its 402s (credits, key budget, key token quota, org member budget),
 * exact settlement (balance drops by the charge, to the micro-won, computed here from the
 * usage and the catalog's prices), the 0.1 KRW minimum, the release of failed calls, duplicate
 * request ids, and races for the last credits.
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from "bun:test";
import { dbKinds, startTestGateway, type TestGateway } from "../harness";
import {
  chargeOf,
  chat,
  chatFetch,
  errorCode,
  fastUser,
  krwMicro,
  money,
  parseSse,
  sdk,
  simChatCalls,
  tenant,
  usageOf,
  user,
} from "../support/chat";

// Real servers and databases on a shared machine: generous per-test deadlines.
setDefaultTimeout(20_000);

/** Catalog prices in micro-USD per million tokens (src/core/catalog/catalog.json), FX 1400 KRW/USD. */
const PRICES: Record<string, { input: bigint; output: bigint; cached: bigint; write: bigint }> = {
  "gpt-4o-mini": { input: 150_000n, output: 600_000n, cached: 75_000n, write: 150_000n },
  "gpt-4o": { input: 2_500_000n, output: 10_000_000n, cached: 1_250_000n, write: 2_500_000n },
  "claude-haiku-4-5": { input: 1_000_000n, output: 5_000_000n, cached: 100_000n, write: 1_250_000n },
  "claude-sonnet-4-5": { input: 3_000_000n, output: 15_000_000n, cached: 300_000n, write: 3_750_000n },
  "gemini-2.5-flash": { input: 300_000n, output: 2_500_000n, cached: 300_000n, write: 300_000n },
};
const FX_MILLI = 1_400_000n;

/** Expected charge in micro-won: Σ tokens × price × fx / 1e9, rounded up once; ≥ 0.1 KRW. */
export function expectedMicro(
  model: string,
  u: {
    prompt_tokens: number;
    completion_tokens: number;
    prompt_tokens_details?: { cached_tokens?: number };
    cache_creation_input_tokens?: number;
  },
  minimum = true,
): bigint {
  const p = PRICES[model]!;
  const cached = BigInt(u.prompt_tokens_details?.cached_tokens ?? 0);
  const writes = BigInt(u.cache_creation_input_tokens ?? 0);
  const plain = BigInt(u.prompt_tokens) - cached - writes;
  const num =
    (plain * p.input + cached * p.cached + writes * p.write + BigInt(u.completion_tokens) * p.output) * FX_MILLI;
  const micro = (num + 999_999_999n) / 1_000_000_000n;
  return minimum && micro < 100_000n ? 100_000n : micro;
}

for (const kind of await dbKinds()) {
  describe(`money on ${kind}`, () => {
    let g: TestGateway;
    beforeAll(async () => {
      g = await startTestGateway({ db: kind });
    }, 60_000);
    afterAll(async () => {
      await g?.stop();
    });

    /** The hold of a request, observed from /v1/me while the upstream waits. */
    async function observeHold(apiKey: string, jwt: string, body: Record<string, unknown>): Promise<bigint> {
      const call = chat(g, apiKey, body);
      let held = 0;
      for (let i = 0; i < 300 && !held; i++) {
        held = (await g.call("GET", "/v1/me", { token: jwt })).body.held_krw;
        if (!held) await Bun.sleep(5);
      }
      expect((await call).status).toBe(200);
      return krwMicro(held);
    }

    describe("the hold", () => {
      test("it covers the actual cost, and a balance just under it is 402 while just over it passes", async () => {
        const body = { model: "gpt-4o", messages: user("measure the hold [sim:latency=300]"), max_tokens: 2000 };
        const probe = await fastUser(g, { creditKrw: 1000 });
        const probeKey = await g.newKey(probe);
        const hold = await observeHold(probeKey.key, probe.jwt, body);
        // 2000 output tokens at 10 USD/Mtok = 28 KRW, plus the input estimate.
        expect(hold).toBeGreaterThan(28_000_000n);
        expect(hold).toBeLessThan(29_000_000n);
        const spent = 1000_000_000n - (await money(g, probe.id)).balance;
        expect(spent).toBeLessThanOrEqual(hold);
        const under = await tenant(g, Number(hold / 1_000_000n)); // floor: less than the hold
        g.gw.sim!.reset();
        const r = await chat(g, under.key.key, { ...body, messages: user("measure the hold") });
        expect(r.status).toBe(402);
        expect(errorCode(r.body)).toBe("insufficient_credits");
        expect(g.gw.sim!.stats().total).toBe(0);
        const over = await tenant(g, Number(hold / 1_000_000n) + 1);
        expect((await chat(g, over.key.key, { ...body, messages: user("measure the hold") })).status).toBe(200);
      });

      test("a Korean prompt holds at least one token per syllable (real tokenizers spend ≥ 1 on each)", async () => {
        const u = await fastUser(g, { creditKrw: 100 });
        const k = await g.newKey(u);
        const korean = "안녕하세요 반갑습니다 ".repeat(50); // 500 Hangul syllables (+ spaces)
        const hold = await observeHold(k.key, u.jwt, {
          model: "gpt-4o",
          messages: user(`${korean}[sim:latency=300]`),
          max_tokens: 1,
        });
        // gpt-4o input: 2.5 USD/Mtok → 3,500 µ₩ a token; the 1 output token is 14,000 µ₩.
        expect(hold - 14_000n).toBeGreaterThanOrEqual(500n * 3_500n);
      });

      test("insufficient credits: 402 with the top-up action, balance unchanged, no upstream call", async () => {
        const { key, user: u, sdk: c } = await tenant(g, 1);
        g.gw.sim!.reset();
        const r = await chat(g, key.key, { model: "gpt-4o", messages: user("too expensive") });
        expect(r.status).toBe(402);
        expect(r.body.detail.error).toBe("insufficient_credits");
        expect(r.body.detail.action).toEqual({ type: "topup", path: "/billing" });
        expect(typeof r.body.detail.message).toBe("string");
        const s = await c.chat.completions
          .create({ model: "gpt-4o", messages: user("too expensive"), stream: true })
          .catch((e) => e);
        expect(s.status).toBe(402);
        expect(s.code).toBe("insufficient_credits");
        expect(g.gw.sim!.stats().total).toBe(0);
        expect(await money(g, u.id)).toEqual({ balance: 1_000_000n, held: 0n });
        // A user with nothing at all.
        const broke = await fastUser(g);
        const k = await g.newKey(broke);
        expect((await chat(g, k.key, { model: "gpt-4o-mini", messages: user("x"), max_tokens: 1 })).status).toBe(402);
      });

      test("key monthly_budget_krw: 402 monthly_budget_exceeded; a 1 KRW budget fits exactly ten 0.1 KRW calls", async () => {
        const u = await fastUser(g, { creditKrw: 100 });
        const tight = await g.newKey(u, { monthly_budget_krw: 1 });
        const r = await chat(g, tight.key, { model: "gpt-4o-mini", messages: user("x") }); // default 4096 → hold ≈ 3.4 KRW
        expect(r.status).toBe(402);
        expect(errorCode(r.body)).toBe("monthly_budget_exceeded");
        // max_tokens 20: hold = charge = the 0.1 KRW minimum.
        const statuses: number[] = [];
        for (let i = 0; i < 11; i++)
          statuses.push(
            (await chat(g, tight.key, { model: "gpt-4o-mini", messages: user(`call ${i}`), max_tokens: 20 })).status,
          );
        expect(statuses).toEqual([...Array(10).fill(200), 402]);
        expect((await money(g, u.id)).balance).toBe(100_000_000n - 1_000_000n);
        // Another key of the same user is not affected.
        const free = await g.newKey(u);
        expect((await chat(g, free.key, { model: "gpt-4o-mini", messages: user("x") })).status).toBe(200);
        // Raising the budget opens the key again.
        await g.call("PATCH", `/v1/keys/${tight.id}`, { token: u.jwt, body: { monthly_budget_krw: 2 } });
        expect(
          (await chat(g, tight.key, { model: "gpt-4o-mini", messages: user("again"), max_tokens: 20 })).status,
        ).toBe(200);
      });

      test("key monthly_token_limit: 402 monthly_token_quota_exceeded, counting input + output", async () => {
        const u = await fastUser(g, { creditKrw: 100 });
        const k = await g.newKey(u, { monthly_token_limit: 100 });
        const big = await chat(g, k.key, { model: "gpt-4o-mini", messages: user("x") }); // reserves 4096+
        expect(big.status).toBe(402);
        expect(errorCode(big.body)).toBe("monthly_token_quota_exceeded");
        let used = 0;
        const statuses: number[] = [];
        for (let i = 0; i < 6; i++) {
          const r = await chat(g, k.key, { model: "gpt-4o-mini", messages: user("q"), max_tokens: 20 });
          statuses.push(r.status);
          if (r.status === 200) used += r.body.usage.total_tokens;
          else expect(errorCode(r.body)).toBe("monthly_token_quota_exceeded");
        }
        // Each call uses 21 tokens (1 in, 20 out) and reserves a bit more; the limit stops them in time.
        expect(statuses[0]).toBe(200);
        expect(statuses.at(-1)).toBe(402);
        expect(used).toBeLessThanOrEqual(100);
        await g.gw.settlements.quiesce(); // the last settle lands behind its answer
        const monthly = await g.gw.deps.db.query<{ t: string; h: string }>(
          "select tokens::text as t, held_tokens::text as h from key_monthly where key_id = $1",
          [k.id],
        );
        expect(Number(monthly[0]!.t)).toBe(used);
        expect(Number(monthly[0]!.h)).toBe(0);
      });

      test("org member monthly budget: 402 org_member_monthly_budget_exceeded", async () => {
        const owner = await fastUser(g, { creditKrw: 10 });
        const member = await fastUser(g, { creditKrw: 100 });
        const org = await g.admin("POST", "/v1/admin/orgs", { name: "team", owner_user_id: owner.id });
        expect(org.status).toBe(201);
        const m = await g.admin("POST", `/v1/admin/orgs/${org.body.org_id}/members`, {
          user_id: member.id,
          role: "member",
          monthly_budget_krw: 1,
        });
        expect(m.status).toBe(201);
        const k = await g.newKey(member);
        const r = await chat(g, k.key, { model: "gpt-4o-mini", messages: user("x") });
        expect(r.status).toBe(402);
        expect(errorCode(r.body)).toBe("org_member_monthly_budget_exceeded");
        const statuses: number[] = [];
        for (let i = 0; i < 11; i++)
          statuses.push(
            (await chat(g, k.key, { model: "gpt-4o-mini", messages: user(`m${i}`), max_tokens: 20 })).status,
          );
        expect(statuses).toEqual([...Array(10).fill(200), 402]);
        // Lifting the member budget lifts the limit.
        await g.admin("POST", `/v1/admin/orgs/${org.body.org_id}/members`, {
          user_id: member.id,
          role: "member",
          monthly_budget_krw: null,
        });
        expect((await chat(g, k.key, { model: "gpt-4o-mini", messages: user("x") })).status).toBe(200);
      });
    });

    describe("settlement", () => {
      for (const [model, stream] of [
        ["gpt-4o", false],
        ["gpt-4o", true],
        ["claude-sonnet-4-5", false],
        ["claude-sonnet-4-5", true],
        ["gemini-2.5-flash", false],
        ["gemini-2.5-flash", true],
      ] as const) {
        test(`${model}${stream ? " (stream)" : ""}: the balance drops by exactly the usage at catalog prices`, async () => {
          const { key, user: u } = await tenant(g, 500);
          const body = {
            model,
            messages: [
              { role: "system", content: "You are terse." },
              ...user("a priced answer please [sim:tokens=777]"),
            ],
          };
          let usage: any;
          let cost: any;
          let rid: string;
          if (stream) {
            const res = await chatFetch(g, key.key, { ...body, stream: true });
            rid = res.headers.get("x-request-id")!;
            const final = parseSse(await res.text())
              .filter((e) => e.json?.cost)
              .at(-1)!.json;
            usage = final.usage;
            cost = final.cost;
          } else {
            const r = await chat(g, key.key, body);
            expect(r.status).toBe(200);
            rid = r.headers.get("x-request-id")!;
            usage = r.body.usage;
            cost = r.body.cost;
            expect(r.headers.get("x-cost-krw")).toBe(String(cost.krw));
          }
          expect(usage.completion_tokens).toBe(777);
          const want = expectedMicro(model, usage);
          const after = await money(g, u.id);
          expect(after.held).toBe(0n);
          expect(500_000_000n - after.balance).toBe(want);
          expect(await chargeOf(g, rid)).toBe(want);
          // What the API shows: balance_krw to 6 decimals, cost.krw rounded half up, usd exact to 1e-9.
          const me = await g.call("GET", "/v1/me", { token: u.jwt });
          expect(krwMicro(me.body.balance_krw)).toBe(after.balance);
          expect(cost.krw).toBe(Number((want + 500_000n) / 1_000_000n));
          expect(cost.fx_rate).toBe(1400);
          expect(cost.markup_rate).toBe(0);
          expect(Math.abs(cost.usd * cost.fx_rate * 1e6 - Number(want))).toBeLessThan(2);
          const ev = await usageOf(g, rid);
          expect(BigInt(ev.cost_micro)).toBe(want);
          expect([Number(ev.prompt_tokens), Number(ev.completion_tokens), ev.status]).toEqual([
            usage.prompt_tokens,
            777,
            200,
          ]);
        });
      }

      test("the minimum charge: a tiny call costs exactly 0.1 KRW", async () => {
        const { key, user: u } = await tenant(g, 10);
        const r = await chat(g, key.key, { model: "gpt-4o-mini", messages: user("hi") });
        expect(expectedMicro("gpt-4o-mini", r.body.usage, false)).toBeLessThan(100_000n);
        expect(await money(g, u.id)).toEqual({ balance: 9_900_000n, held: 0n });
        expect(r.body.cost).toMatchObject({ krw: 0, fx_rate: 1400, markup_rate: 0 });
        expect(Math.abs(r.body.cost.usd - 0.1 / 1400)).toBeLessThan(1e-9);
        const s = await chatFetch(g, key.key, {
          model: "gemini-2.5-flash",
          messages: user("hi"),
          max_tokens: 100,
          stream: true,
        });
        const final = parseSse(await s.text())
          .filter((e) => e.json?.cost)
          .at(-1)!.json;
        expect(Math.abs(final.cost.usd - 0.1 / 1400)).toBeLessThan(1e-9);
        expect(await money(g, u.id)).toEqual({ balance: 9_800_000n, held: 0n });
      });

      test("a failed call releases the whole hold and charges nothing", async () => {
        const { key, user: u } = await tenant(g, 100);
        for (const text of ["down [sim:fail=503]", "rejected [sim:fail=400]", "busy [sim:fail=429]"]) {
          const r = await chat(g, key.key, { model: "gpt-4o", messages: user(text) });
          expect(r.status).toBeGreaterThanOrEqual(429);
          expect(await chargeOf(g, r.headers.get("x-request-id")!)).toBeNull();
          const ev = await usageOf(g, r.headers.get("x-request-id")!);
          expect(BigInt(ev.cost_micro)).toBe(0n);
        }
        expect(await money(g, u.id)).toEqual({ balance: 100_000_000n, held: 0n });
        const holds = await g.gw.deps.db.query<{ s: string; n: string }>(
          "select status as s, count(*)::text as n from holds where user_id = $1 group by status",
          [u.id],
        );
        expect(holds).toEqual([{ s: "released", n: "3" }]);
      });

      test("a reused X-Request-Id is refused (409) and never charged twice", async () => {
        const { key, user: u } = await tenant(g, 10);
        const rid = crypto.randomUUID();
        const a = await chat(g, key.key, { model: "gpt-4o-mini", messages: user("once") }, { "x-request-id": rid });
        expect(a.status).toBe(200);
        expect(a.headers.get("x-request-id")).toBe(rid);
        const b = await chat(g, key.key, { model: "gpt-4o-mini", messages: user("once") }, { "x-request-id": rid });
        expect(b.status).toBe(409);
        expect(await money(g, u.id)).toEqual({ balance: 9_900_000n, held: 0n });
      });

      test("the sweeper releases holds whose request died", async () => {
        const u = await fastUser(g, { creditKrw: 10 });
        const id = crypto.randomUUID();
        expect(
          await g.gw.ledger.hold({ id, userId: u.id, keyId: null, amountMicro: 3_000_000n, tokens: 10, ttlSeconds: 0 }),
        ).toBe("ok");
        expect(await money(g, u.id)).toEqual({ balance: 10_000_000n, held: 3_000_000n });
        await Bun.sleep(20);
        expect(await g.gw.ledger.sweepExpired()).toBeGreaterThanOrEqual(1);
        expect(await money(g, u.id)).toEqual({ balance: 10_000_000n, held: 0n });
        // A late settle of the swept hold moves nothing.
        expect(await g.gw.ledger.settle(id, 1_000_000n, 10, null)).toBe(false);
        expect(await money(g, u.id)).toEqual({ balance: 10_000_000n, held: 0n });
      });
    });

    describe("races", () => {
      test("two concurrent calls for credits enough for one: exactly one 200 and one 402", async () => {
        const body = { model: "gpt-4o", messages: user("race [sim:latency=400]"), max_tokens: 3000 };
        // Hold ≈ 42 KRW (3000 × 10 USD/Mtok) + input; 60 KRW fits one, not two.
        for (let round = 0; round < 3; round++) {
          const { key, user: u } = await tenant(g, 60);
          const rs = await Promise.all([chat(g, key.key, body), chat(g, key.key, body)]);
          expect(rs.map((r) => r.status).sort()).toEqual([200, 402]);
          const after = await money(g, u.id);
          expect(after.held).toBe(0n);
          expect(after.balance).toBeGreaterThanOrEqual(0n);
          const charged = await chargeOf(g, rs.find((r) => r.status === 200)!.headers.get("x-request-id")!);
          expect(60_000_000n - after.balance).toBe(charged!);
        }
      });

      test("ten concurrent calls (streams and not) for credits enough for three: exactly three win", async () => {
        const probe = await fastUser(g, { creditKrw: 1000 });
        const pk = await g.newKey(probe);
        const hold = await observeHold(pk.key, probe.jwt, {
          model: "gpt-4o",
          messages: user("race ten [sim:latency=800]"),
          max_tokens: 1000,
        });
        const { key, user: u } = await tenant(g, Number((3n * hold) / 1_000_000n) + 1); // ≥ 3 holds, < 4
        expect(BigInt(Number((3n * hold) / 1_000_000n) + 1) * 1_000_000n).toBeLessThan(4n * hold);
        const c = sdk(g, key.key);
        const one = async (i: number) => {
          const req = { model: "gpt-4o", messages: user("race ten [sim:latency=800]"), max_tokens: 1000 };
          try {
            if (i % 2) {
              const s = await c.chat.completions.create({ ...req, stream: true });
              for await (const _ of s);
            } else await c.chat.completions.create(req);
            return 200;
          } catch (e: any) {
            return e.status as number;
          }
        };
        // Every hold is placed long before the first upstream answers (800 ms), so no settle
        // can free credits for a fourth winner.
        const statuses = await Promise.all(Array.from({ length: 10 }, (_, i) => one(i)));
        expect(statuses.filter((s) => s === 200)).toHaveLength(3);
        expect(statuses.filter((s) => s === 402)).toHaveLength(7);
        const after = await money(g, u.id);
        expect(after.held).toBe(0n);
        expect(after.balance).toBeGreaterThanOrEqual(0n);
      }, 15_000);

      test("concurrent calls never push a key over its monthly budget", async () => {
        const u = await fastUser(g, { creditKrw: 100 });
        const k = await g.newKey(u, { monthly_budget_krw: 1 });
        g.gw.sim!.reset();
        const rs = await Promise.all(
          Array.from({ length: 16 }, (_, i) =>
            chat(g, k.key, { model: "gpt-4o-mini", messages: user(`b${i} [sim:latency=50]`), max_tokens: 20 }),
          ),
        );
        expect(rs.filter((r) => r.status === 200)).toHaveLength(10);
        expect(rs.filter((r) => r.status === 402).every((r) => errorCode(r.body) === "monthly_budget_exceeded")).toBe(
          true,
        );
        expect(simChatCalls(g)).toEqual({ openai: 10 });
        expect(await money(g, u.id)).toEqual({ balance: 99_000_000n, held: 0n });
      });
    });
  });
}
