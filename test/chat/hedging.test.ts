/**
 * Hedged requests over real sockets: deepseek-v3 is offered by deepseek (first) and together,
 * and `[sim:latency@deepseek=MS]` makes only deepseek slow. With hedging on, a slow deepseek
 * is overtaken by together after the hedge delay (bounded here to 50–250 ms); the client gets
 * one answer and one charge: together's price plus deepseek's input at deepseek's price (ledger
 * and usage_events in SQL), deepseek's request is cancelled (the simulator sees its client
 * leave), and `/metrics` counts the race. Hedging is the key owner's setting: a request's
 * `provider.hedge: true` on a key without it is ignored and the client warned.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { dbKinds, startTestGateway, type TestGateway } from "../harness";
import { chat, chatFetch, eventually, parseSse, simChatCalls, tenant, user } from "../support/chat";
import { createPolicy } from "../routing/helpers";

setDefaultTimeout(30_000);

const MODEL = "deepseek-v3";
/** together's deepseek-v3 price: 1.25 USD per million tokens in and out, at 1,400 KRW per USD. */
const TOGETHER_MICRO_PER_TOKEN = 1750;
const SLOW = 1200;
/** Long enough a reply that its price is above the 0.1 KRW minimum charge. */
const LONG = "[sim:tokens=200]";

for (const kind of await dbKinds()) {
  describe(`hedged requests (${kind})`, () => {
    let g: TestGateway;
    beforeAll(async () => {
      g = await startTestGateway({ db: kind, env: { HEDGE_MIN_DELAY_MS: "50", HEDGE_MAX_DELAY_MS: "250" } });
    }, 60_000);
    afterAll(async () => {
      await g?.stop();
    });

    /** A tenant who consents to together (it trains on data), with extra key fields. */
    async function consenting(keyBody: Record<string, unknown> = {}) {
      const t = await tenant(g, 1000, keyBody);
      await g.admin("PATCH", `/v1/admin/users/${t.user.id}`, { xborder_training_consent: true });
      return t;
    }

    /** The call's rows: its usage event, its ledger charges, and the account's open holds. */
    async function books(requestId: string, userId: string) {
      const db = g.gw.deps.db;
      const usage = await db.query<{ provider: string; status: number; p: number; c: number; cost: string }>(
        "select provider, status, prompt_tokens as p, completion_tokens as c, cost_micro::text as cost from usage_events where request_id = $1",
        [requestId],
      );
      const charges = await db.query<{ amount: string }>(
        "select amount_micro::text as amount from ledger_entries where request_id = $1 and kind = 'charge'",
        [requestId],
      );
      const held = await db.query<{ n: string }>(
        "select count(*)::text as n from holds where user_id = $1 and status = 'open'",
        [userId],
      );
      return { usage, charges: charges.map((r) => BigInt(r.amount)), openHolds: Number(held[0]!.n) };
    }

    async function metric(line: string): Promise<number> {
      const text = await g.metrics();
      const hit = text.split("\n").find((l) => l.startsWith(line + " "));
      return hit ? Number(hit.slice(line.length + 1)) : 0;
    }

    /** A settle may land just behind the answer: wait for the call's charge. */
    async function settled(requestId: string, userId: string) {
      let b = await books(requestId, userId);
      await eventually(async () => (b = await books(requestId, userId)).usage.length === 1 && b.openHolds === 0);
      return b;
    }

    test("off by default: a slow first provider is waited for, and nobody else is called", async () => {
      const { key } = await consenting();
      g.gw.sim!.reset();
      const t0 = performance.now();
      const r = await chat(g, key.key, { model: MODEL, messages: user(`default [sim:latency@deepseek=600]`) });
      expect(r.status).toBe(200);
      expect(r.body.provider).toBe("deepseek");
      expect(performance.now() - t0).toBeGreaterThanOrEqual(600);
      expect(simChatCalls(g)).toEqual({ deepseek: 1 });
    });

    /** The cancelled loser's input at its price since `before` (what /metrics counted), in micro-won. */
    async function loserMicro(before: number): Promise<bigint> {
      return BigInt(Math.round(((await metric('gateway_hedge_cost_krw_total{provider="deepseek"}')) - before) * 1e6));
    }

    test("a request's hedge: true on a key without hedging is ignored, with an x-gateway-warnings entry", async () => {
      const { user: u, key } = await consenting();
      g.gw.sim!.reset();
      const r = await chat(g, key.key, {
        model: MODEL,
        messages: user(`not mine to ask ${LONG} [sim:latency@deepseek=600]`),
        provider: { hedge: true },
      });
      expect(r.status).toBe(200);
      expect(r.body.provider).toBe("deepseek");
      expect(simChatCalls(g)).toEqual({ deepseek: 1 });
      expect(r.headers.get("x-gateway-warnings")).toContain("unsupported-setting=provider.hedge; provider=gateway");
      const b = await settled(r.headers.get("x-request-id")!, u.id);
      expect(b.charges).toEqual([-BigInt(b.usage[0]!.cost)]);
    });

    test("JSON on a hedging key: the hedge answers, the slow primary is cancelled; one charge: the winner plus the loser's input", async () => {
      const { user: u, key } = await consenting({ hedge: true });
      g.gw.sim!.reset();
      const won = await metric('gateway_hedges_total{outcome="hedge_won"}');
      const cost = await metric('gateway_hedge_cost_krw_total{provider="deepseek"}');
      const t0 = performance.now();
      const r = await chat(g, key.key, {
        model: MODEL,
        messages: user(`json ${LONG} [sim:latency@deepseek=${SLOW}]`),
        provider: { hedge: true },
      });
      const ms = performance.now() - t0;
      expect(r.status).toBe(200);
      expect(r.body.provider).toBe("together");
      expect(ms).toBeLessThan(SLOW - 300);
      expect(simChatCalls(g)).toEqual({ deepseek: 1, together: 1 });
      expect(await eventually(() => g.gw.sim!.cancelled().deepseek === 1)).toBe(true);

      const b = await settled(r.headers.get("x-request-id")!, u.id);
      expect(b.usage).toHaveLength(1);
      const e = b.usage[0]!;
      expect([e.provider, e.status]).toEqual(["together", 200]);
      const loser = await loserMicro(cost);
      expect(loser).toBeGreaterThan(0n);
      const price = BigInt((e.p + e.c) * TOGETHER_MICRO_PER_TOKEN) + loser;
      expect(BigInt(e.cost)).toBe(price);
      expect(b.charges).toEqual([-price]);
      expect(r.body.cost.krw).toBe(Math.round(Number(price) / 1e6));
      expect(await metric('gateway_hedges_total{outcome="hedge_won"}')).toBe(won + 1);
    });

    test("a fast primary needs no hedge: one upstream call", async () => {
      const { key } = await consenting({ hedge: true });
      g.gw.sim!.reset();
      const before = await metric('gateway_hedges_total{outcome="not_needed"}');
      const r = await chat(g, key.key, { model: MODEL, messages: user("fast"), provider: { hedge: true } });
      expect(r.body.provider).toBe("deepseek");
      expect(simChatCalls(g)).toEqual({ deepseek: 1 });
      expect(await metric('gateway_hedges_total{outcome="not_needed"}')).toBe(before + 1);
    });

    test("a primary failing before the hedge delay falls back as without hedging", async () => {
      const { key } = await consenting({ hedge: true });
      g.gw.sim!.reset();
      const r = await chat(g, key.key, {
        model: MODEL,
        messages: user("early failure [sim:fail@deepseek=503]"),
        provider: { hedge: true },
      });
      expect(r.body.provider).toBe("together");
      expect(simChatCalls(g)).toEqual({ deepseek: 3, together: 1 });
    });

    test("both lanes failing fail the call as before, and nothing is charged", async () => {
      const { user: u, key } = await consenting({ hedge: true });
      g.gw.sim!.reset();
      const r = await chat(g, key.key, {
        model: MODEL,
        messages: user("all down [sim:latency@deepseek=300] [sim:fail=503]"),
        provider: { hedge: true },
      });
      expect(r.status).toBe(502);
      expect(r.body.detail.error).toBe("upstream_unavailable");
      expect(new Set(r.body.detail.providers.map((p: any) => p.provider))).toEqual(new Set(["deepseek", "together"]));
      const b = await settled(r.headers.get("x-request-id")!, u.id);
      expect(b.charges).toEqual([]);
      expect(b.usage[0]!.status).toBe(502);
    });

    test("a hedge the other provider rejects leaves the primary to answer", async () => {
      const { key } = await consenting({ hedge: true });
      g.gw.sim!.reset();
      const r = await chat(g, key.key, {
        model: MODEL,
        messages: user("hedge rejected [sim:latency@deepseek=600] [sim:fail@together=400]"),
        provider: { hedge: true },
      });
      expect(r.status).toBe(200);
      expect(r.body.provider).toBe("deepseek");
      expect(simChatCalls(g)).toEqual({ deepseek: 1, together: 1 });
    });

    test("stream (raw relay): the hedge's stream reaches the client, the primary's never does; one charge", async () => {
      const { user: u, key } = await consenting({ hedge: true });
      g.gw.sim!.reset();
      const cost = await metric('gateway_hedge_cost_krw_total{provider="deepseek"}');
      const t0 = performance.now();
      const res = await chatFetch(g, key.key, {
        model: MODEL,
        messages: user(`stream ${LONG} [sim:latency@deepseek=${SLOW}]`),
        stream: true,
        provider: { hedge: true },
      });
      expect(res.status).toBe(200);
      const reader = res.body!.getReader();
      let raw = "";
      for (let c = await reader.read(); !c.done; c = await reader.read()) {
        if (!raw) expect(performance.now() - t0).toBeLessThan(SLOW - 300);
        raw += new TextDecoder().decode(c.value);
      }
      const text = parseSse(raw)
        .map((e) => e.json?.choices?.[0]?.delta?.content ?? "")
        .join("");
      expect(text).toStartWith("Simulated reply from together/");
      expect(await eventually(() => g.gw.sim!.cancelled().deepseek === 1)).toBe(true);
      const b = await settled(res.headers.get("x-request-id")!, u.id);
      expect(b.usage[0]!.provider).toBe("together");
      const price = BigInt((b.usage[0]!.p + b.usage[0]!.c) * TOGETHER_MICRO_PER_TOKEN) + (await loserMicro(cost));
      expect(BigInt(b.usage[0]!.cost)).toBe(price);
      expect(b.charges).toEqual([-price]);
    });

    test("stream (typed events, Responses API): the first event decides", async () => {
      const { user: u, key } = await consenting({ hedge: true });
      g.gw.sim!.reset();
      const t0 = performance.now();
      const res = await fetch(g.url + "/v1/responses", {
        method: "POST",
        headers: { authorization: `Bearer ${key.key}`, "content-type": "application/json" },
        body: JSON.stringify({
          model: MODEL,
          input: `typed [sim:latency@deepseek=${SLOW}]`,
          stream: true,
          provider: { hedge: true },
        }),
      });
      const body = await res.text();
      expect(res.status).toBe(200);
      expect(performance.now() - t0).toBeLessThan(SLOW - 300);
      expect(body).toContain("Simulated reply from together/");
      expect(await eventually(() => g.gw.sim!.cancelled().deepseek === 1)).toBe(true);
      const b = await settled(res.headers.get("x-request-id")!, u.id);
      expect([b.usage.length, b.usage[0]!.provider, b.charges.length]).toEqual([1, "together", 1]);
    });

    test("per key: a key with hedge on hedges; a request's hedge: false wins over it", async () => {
      const { key } = await consenting({ hedge: true });
      expect(key.hedge).toBe(true);
      g.gw.sim!.reset();
      const on = await chat(g, key.key, { model: MODEL, messages: user(`key [sim:latency@deepseek=${SLOW}]`) });
      expect(on.body.provider).toBe("together");
      g.gw.sim!.reset();
      const off = await chat(g, key.key, {
        model: MODEL,
        messages: user(`key off [sim:latency@deepseek=400]`),
        provider: { hedge: false },
      });
      expect(off.body.provider).toBe("deepseek");
      expect(simChatCalls(g)).toEqual({ deepseek: 1 });
    });

    test("PATCH turns a key's hedging off; non-boolean switches are 422 before any call", async () => {
      const { user: u, key } = await consenting({ hedge: true });
      const patched = await g.call("PATCH", `/v1/keys/${key.id}`, { token: u.jwt, body: { hedge: false } });
      expect([patched.status, patched.body.hedge]).toEqual([200, false]);
      expect((await g.call("PATCH", `/v1/keys/${key.id}`, { token: u.jwt, body: { hedge: "yes" } })).status).toBe(422);
      g.gw.sim!.reset();
      const r = await chat(g, key.key, { model: MODEL, messages: user(`patched [sim:latency@deepseek=400]`) });
      expect(r.body.provider).toBe("deepseek");
      const bad = await chat(g, key.key, { model: MODEL, messages: user("bad switch"), provider: { hedge: "yes" } });
      expect(bad.status).toBe(422);
      expect(simChatCalls(g)).toEqual({ deepseek: 1 });
    });

    test("the latency policy engine hedges between its candidates on a hedging key", async () => {
      const { user: u, key } = await consenting({ hedge: true });
      const p = await createPolicy(g, u, {
        policy_type: "latency",
        entries: [{ model: MODEL }],
        config: { latency: { exploration: 0 } },
      });
      g.gw.sim!.reset();
      const r = await chat(g, key.key, {
        model: `orch/${p.slug}`,
        messages: user(`policy [sim:latency@deepseek=${SLOW}]`),
      });
      expect(r.status).toBe(200);
      expect(r.body.provider).toBe("together");
      expect(simChatCalls(g)).toEqual({ deepseek: 1, together: 1 });
    });

    test("a single provider (a pinned model) is never hedged", async () => {
      const { key } = await consenting({ hedge: true });
      g.gw.sim!.reset();
      const r = await chat(g, key.key, {
        model: `${MODEL}@deepseek`,
        messages: user("pinned [sim:latency@deepseek=400]"),
        provider: { hedge: true },
      });
      expect(r.body.provider).toBe("deepseek");
      expect(simChatCalls(g)).toEqual({ deepseek: 1 });
    });
  });
}
