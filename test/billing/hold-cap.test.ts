/**
 * A charge is capped by its hold and no balance goes below zero.
 *
 * The simulator never cuts a forced tool call at max_tokens, so a request with a large tool
 * schema and `max_tokens: 1` costs far more than its hold (sized for one output token): the
 * case of any usage that outgrows its hold's estimate. The account can afford the hold but not
 * the usage. Through HTTP on PostgreSQL and PGlite (one call at a time, batched settles, credit
 * leases), and in SQL for what only a lease charge can meet (a lease that no longer covers it).
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { dbKinds, postgresAvailable, startTestGateway, type TestGateway } from "../harness";
import { chat, money, tenant } from "../support/chat";
import { checkBooks } from "../support/books";
import { eventJson } from "../../src/db/repos/ledger";
import { microToKrwRounded } from "../../src/lib/money";

setDefaultTimeout(60_000);

/** A tool whose forced call's arguments (every property required) run to about 1,400 tokens. */
const props = Object.fromEntries(
  Array.from({ length: 150 }, (_, i) => [`field_${String(i).padStart(3, "0")}_value`, { type: "string" }]),
);
const bigTool = {
  type: "function",
  function: { name: "fill_form", parameters: { type: "object", properties: props, required: Object.keys(props) } },
};
const overHold = (text = "fill it") => ({
  model: "gpt-4o-mini",
  messages: [{ role: "user", content: text }],
  tools: [bigTool],
  tool_choice: "required",
  max_tokens: 1,
});

async function cappedMetric(g: TestGateway): Promise<number> {
  const text = await g.metrics();
  return Number(/^gateway_charges_capped_total (\d+)$/m.exec(text)?.[1] ?? 0);
}

const holdOf = async (g: TestGateway, rid: string) => {
  const [h] = await g.gw.deps.db.query<{ amount: string; charged: string | null; status: string }>(
    "select amount_micro::text as amount, charged_micro::text as charged, status from holds where id = $1",
    [rid],
  );
  return h!;
};

for (const kind of await dbKinds()) {
  describe(`a charge never exceeds its hold (${kind})`, () => {
    let g: TestGateway;
    beforeAll(async () => {
      g = await startTestGateway({ db: kind, env: { LEDGER_LEASES: "off" } });
    }, 60_000);
    afterAll(async () => {
      await g?.stop();
    });

    test("an account with 1 KRW whose call outgrows its hold pays the hold, ends at >= 0, and the capped charge is counted", async () => {
      const { user: u, key } = await tenant(g, 1);
      const before = await cappedMetric(g);
      const r = await chat(g, key.key, overHold());
      expect(r.status).toBe(200);
      expect(r.body.choices[0].finish_reason).toBe("tool_calls");
      const rid = r.headers.get("x-request-id")!;
      await g.gw.settlements.quiesce();
      const h = await holdOf(g, rid);
      // What the usage would have cost, at the catalog's prices: well above the hold and the balance.
      const [e] = await g.gw.deps.db.query<{ p: number; c: number; cost: string }>(
        "select prompt_tokens as p, completion_tokens as c, cost_micro::text as cost from usage_events where request_id = $1",
        [rid],
      );
      const uncapped = BigInt(Math.ceil(((e!.p * 0.15 + e!.c * 0.6) / 1e6) * 1400 * 1e6));
      expect(uncapped).toBeGreaterThan(1_000_000n);
      expect(h.status).toBe("settled");
      expect(h.charged).toBe(h.amount);
      expect(e!.cost).toBe(h.amount);
      const m = await money(g, u.id);
      expect(m.held).toBe(0n);
      expect(m.balance).toBe(1_000_000n - BigInt(h.amount));
      expect(m.balance).toBeGreaterThanOrEqual(0n);
      // The client is told what it paid.
      expect(r.body.cost.krw).toBe(microToKrwRounded(BigInt(h.amount)));
      expect(await cappedMetric(g)).toBe(before + 1);
      expect((await checkBooks(g.gw.deps.db, [u.id])).violations).toEqual([]);
    });

    test("streamed, the same call is capped the same way (and the final event shows the capped cost)", async () => {
      const { user: u, key } = await tenant(g, 1);
      const res = await fetch(g.url + "/v1/chat/completions", {
        method: "POST",
        headers: { authorization: `Bearer ${key.key}`, "content-type": "application/json" },
        body: JSON.stringify({ ...overHold("fill it, streamed"), stream: true }),
      });
      const text = await res.text();
      const rid = res.headers.get("x-request-id")!;
      const final = text
        .split("\n\n")
        .filter((l) => l.includes('"cost"'))
        .map((l) => JSON.parse(l.slice(6)))[0];
      await g.gw.settlements.quiesce();
      const h = await holdOf(g, rid);
      expect(h.charged).toBe(h.amount);
      expect(final.cost.krw).toBe(microToKrwRounded(BigInt(h.amount)));
      expect((await money(g, u.id)).balance).toBe(1_000_000n - BigInt(h.amount));
      expect((await checkBooks(g.gw.deps.db, [u.id])).violations).toEqual([]);
    });

    test("many such calls at once (batched settles) each pay exactly their hold; nothing goes below zero", async () => {
      const { user: u, key } = await tenant(g, 1000);
      const before = await cappedMetric(g);
      const replies = await Promise.all(
        Array.from({ length: 24 }, (_, i) => chat(g, key.key, overHold(`fill it #${i}`))),
      );
      expect(replies.map((r) => r.status)).toEqual(replies.map(() => 200));
      await g.gw.settlements.quiesce();
      for (const r of replies) {
        const h = await holdOf(g, r.headers.get("x-request-id")!);
        expect([h.status, h.charged]).toEqual(["settled", h.amount]);
      }
      expect(await cappedMetric(g)).toBe(before + 24);
      expect((await money(g, u.id)).held).toBe(0n);
      expect((await checkBooks(g.gw.deps.db, [u.id])).violations).toEqual([]);
    });

    test("in SQL: gw_settle and gw_settle_many charge at most the hold and answer 'capped'", async () => {
      const db = g.gw.deps.db;
      const { user: u } = await tenant(g, 10);
      const ids = [crypto.randomUUID(), crypto.randomUUID(), crypto.randomUUID()];
      for (const id of ids) {
        const [h] = await db.query<{ r: string }>("select r from gw_hold($1, $2, null, $3, 2000000, 10, 60)", [
          id,
          u.id,
          new Date().toISOString().slice(0, 7),
        ]);
        expect(h!.r).toBe("ok");
      }
      const ev = eventJson({
        model: "gpt-4o-mini",
        provider: "openai",
        maker: "openai",
        modality: "text",
        app: null,
        status: 200,
        promptTokens: 1,
        completionTokens: 1,
        cachedTokens: 0,
        cacheWriteTokens: 0,
        fxMilli: 1_400_000n,
        latencyMs: 1,
        cached: false,
      });
      const [one] = await db.query<{ r: string }>("select gw_settle($1, 9000000, 2, $2::jsonb) as r", [ids[0], ev]);
      expect(one!.r).toBe("capped");
      const many = await db.query<{ n: number; r: string }>(
        "select n, r from gw_settle_many($1::uuid[], $2::bigint[], $3::bigint[], $4::jsonb[])",
        [ids.slice(1), ["1500000", "7000000"], [2, 2], [ev, ev]],
      );
      expect(many.map((x) => x.r)).toEqual(["ok", "capped"]);
      expect(await money(g, u.id)).toEqual({ balance: 10_000_000n - 2_000_000n - 1_500_000n - 2_000_000n, held: 0n });
      expect((await checkBooks(db, [u.id])).violations).toEqual([]);
    });

    test("in SQL: a lease charge is capped at its call's hold, and what the lease no longer covers comes only from free credits", async () => {
      const db = g.gw.deps.db;
      const month = new Date().toISOString().slice(0, 7);
      const { user: u, key } = await tenant(g, 10);
      const ev = eventJson({
        model: "gpt-4o-mini",
        provider: "openai",
        maker: "openai",
        modality: "text",
        app: null,
        status: 200,
        promptTokens: 1,
        completionTokens: 1,
        cachedTokens: 0,
        cacheWriteTokens: 0,
        fxMilli: 1_400_000n,
        latencyMs: 1,
        cached: false,
      });
      // A lease of 4 KRW; another hold of 5 KRW leaves 1 KRW free.
      const lease = crypto.randomUUID();
      expect(
        (
          await db.query<{ r: string }>("select r from gw_lease_open($1, $2, $3, $4, 4000000, 100, 60)", [
            lease,
            u.id,
            key.id,
            month,
          ])
        )[0]!.r,
      ).toBe("ok");
      const other = crypto.randomUUID();
      expect(
        (
          await db.query<{ r: string }>("select r from gw_hold($1, $2, $3, $4, 5000000, 10, 60)", [
            other,
            u.id,
            key.id,
            month,
          ])
        )[0]!.r,
      ).toBe("ok");
      const charge = (calls: [string, string, string][]) =>
        db.query<{ r: string }>(
          "select r from gw_lease_charge($1::uuid[], $2::uuid[], $3::bigint[], $4::bigint[], $5::bigint[], $6::jsonb[]) order by n",
          [
            calls.map(() => lease),
            calls.map((c) => c[0]),
            calls.map((c) => c[1]),
            calls.map((c) => c[2]),
            calls.map(() => 2),
            calls.map(() => ev),
          ],
        );
      const [a, b, c] = [crypto.randomUUID(), crypto.randomUUID(), crypto.randomUUID()];
      // a: 3 KRW asked, its hold 2 KRW → 2 (capped). b: 2.5 asked, hold 3: the lease covers 2, the
      // last 0.5 comes from the 1 KRW free. c: 2 asked, hold 2: nothing covers it but the 0.5 left free.
      expect(
        (
          await charge([
            [a, "3000000", "2000000"],
            [b, "2500000", "3000000"],
            [c, "2000000", "2000000"],
          ])
        ).map((x) => x.r),
      ).toEqual(["capped", "ok", "capped"]);
      const m = await money(g, u.id);
      expect(m).toEqual({ balance: 10_000_000n - 2_000_000n - 2_500_000n - 500_000n, held: 5_000_000n });
      // The lease closes (swept); a late charge to it only takes free credits: none are left.
      await db.query("select gw_lease_trim($1, 0, 0, true)", [lease]);
      const d = crypto.randomUUID();
      expect((await charge([[d, "1000000", "1000000"]])).map((x) => x.r)).toEqual(["capped"]);
      await db.query("select gw_release($1, null)", [other]);
      const end = await money(g, u.id);
      expect(end).toEqual({ balance: 5_000_000n, held: 0n });
      expect(end.balance).toBeGreaterThanOrEqual(0n);
      const charged = await db.query<{ cost: string }>(
        "select cost_micro::text as cost from usage_events where request_id = any($1::uuid[]) order by cost_micro desc",
        [[a, b, c, d]],
      );
      expect(charged.map((x) => x.cost)).toEqual(["2500000", "2000000", "500000", "0"]);
      expect((await checkBooks(db, [u.id])).violations).toEqual([]);
    });
  });
}

if (await postgresAvailable()) {
  describe("credit leases never overdraw (pg)", () => {
    let g: TestGateway;
    beforeAll(async () => {
      g = await startTestGateway({ db: "pg", env: { LEDGER_LEASES: "on" } });
    }, 60_000);
    afterAll(async () => {
      await g?.stop();
    });

    test("a busy key's calls that outgrow their holds, held against leases, each pay exactly their hold", async () => {
      const { user: u, key } = await tenant(g, 2000);
      const before = await cappedMetric(g);
      const n = 200;
      let next = 0;
      const rids: string[] = [];
      await Promise.all(
        Array.from({ length: 24 }, async () => {
          while (next < n) {
            const r = await chat(g, key.key, overHold("fill it"));
            next++;
            expect(r.status).toBe(200);
            rids.push(r.headers.get("x-request-id")!);
          }
        }),
      );
      // Reading the account retires its leases (read-your-writes): every charge has landed.
      expect((await g.call("GET", "/v1/me", { token: key.key })).body.held_krw).toBe(0);
      const db = g.gw.deps.db;
      const [leased] = await db.query<{ n: number }>(
        "select count(*)::int as n from ledger_entries where user_id = $1 and kind = 'charge' and meta ? 'lease'",
        [u.id],
      );
      expect(leased!.n).toBeGreaterThan(0);
      // Every call asked the same hold: the one of a call held alone in the database.
      const holds = await db.query<{ a: string }>(
        "select distinct amount_micro::text as a from holds where user_id = $1 and not lease",
        [u.id],
      );
      expect(holds).toHaveLength(1);
      const costs = await db.query<{ cost: string }>(
        "select distinct cost_micro::text as cost from usage_events where user_id = $1",
        [u.id],
      );
      expect(costs.map((c) => c.cost)).toEqual([holds[0]!.a]);
      expect(await cappedMetric(g)).toBe(before + rids.length);
      const m = await money(g, u.id);
      expect(m.held).toBe(0n);
      expect(m.balance).toBe(2_000_000_000n - BigInt(holds[0]!.a) * BigInt(rids.length));
      expect((await checkBooks(db, [u.id])).violations).toEqual([]);
    });
  });
}
