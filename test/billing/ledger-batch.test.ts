/**
 * The ledger's natural batching on PostgreSQL (src/core/billing/batching.ts): calls that pile up
 * while statements are in flight go out together, and the books come out exactly as if every
 * call had gone alone: exact charges, holds closed once, duplicates refused, usage events
 * stored with their text intact, and one failing call failing only itself.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { sql } from "drizzle-orm";
import type { Database } from "../../src/db/client";
import { SqlLedger } from "../../src/db/repos/ledger";
import { currentMonth, type UsageEvent } from "../../src/core/billing/ledger";
import { postgresAvailable, startTestGateway, type TestGateway } from "../harness";

setDefaultTimeout(30_000);

const event = (i: number): UsageEvent => ({
  model: "gpt-4o-mini",
  provider: "openai",
  maker: "openai",
  modality: "text",
  app: i % 3 ? `app "${i}" \\ ✓` : null,
  status: 200,
  promptTokens: 10,
  completionTokens: i,
  cachedTokens: 0,
  cacheWriteTokens: 0,
  fxMilli: 1_400_000n,
  latencyMs: 20,
  cached: false,
});

/** The gateway's database, counting the statements that carry several calls. */
function counting(db: Database): { db: Database; batches: () => number } {
  let n = 0;
  const wrapped: Database = {
    ...db,
    kind: db.kind,
    orm: db.orm,
    query(text, params) {
      if (text.includes("gw_ledger_step(")) n++;
      return db.query(text, params);
    },
  };
  return { db: wrapped, batches: () => n };
}

if (await postgresAvailable()) {
  describe("ledger batching on pg", () => {
    let g: TestGateway;
    beforeAll(async () => {
      g = await startTestGateway({ db: "pg" });
    });
    afterAll(async () => {
      await g?.stop();
    });

    async function account(creditKrw: number) {
      const u = await g.newUser({ creditKrw });
      const k = await g.newKey(u);
      return { userId: u.id, keyId: k.id as string };
    }
    const money = async (userId: string) => {
      const [r] = await g.gw.deps.db.query<{ b: string; h: string }>(
        "select balance_micro::text as b, held_micro::text as h from users where id = $1",
        [userId],
      );
      return { balance: BigInt(r!.b), held: BigInt(r!.h) };
    };

    test("concurrent holds and settles of one account are batched and charge exactly", async () => {
      const a = await account(10_000);
      const { db, batches } = counting(g.gw.deps.db);
      const ledger = new SqlLedger(db);
      const before = await money(a.userId);
      const ids: string[] = [];
      const results = await Promise.all(
        Array.from({ length: 80 }, async (_, i) => {
          const id = crypto.randomUUID();
          ids.push(id);
          const h = await ledger.hold({
            id,
            userId: a.userId,
            keyId: i % 2 ? a.keyId : null,
            amountMicro: 5_000n,
            tokens: 100,
            ttlSeconds: 900,
          });
          if (h !== "ok") return `hold ${h}`;
          const s = await ledger.settle(id, BigInt(1_000 + i), 30 + i, i % 5 ? event(i) : null);
          const again = await ledger.settle(id, 1n, 1, null);
          return s && !again ? "ok" : `settle ${s} then ${again}`;
        }),
      );
      expect(results.filter((r) => r !== "ok")).toEqual([]);
      expect(batches()).toBeGreaterThan(0);
      const after = await money(a.userId);
      const charged = Array.from({ length: 80 }, (_, i) => BigInt(1_000 + i)).reduce((x, y) => x + y, 0n);
      expect(before.balance - after.balance).toBe(charged);
      expect(after.held).toBe(0n);
      const [u] = await g.gw.deps.db.query<{ c: number; apps: number; sample: string | null }>(
        "select count(*)::int as c, count(app)::int as apps, max(app) as sample from usage_events where request_id = any($1::uuid[])",
        [ids],
      );
      expect(u!.c).toBe(64); // every call but the 16 settled without an event
      expect(u!.apps).toBe(Array.from({ length: 80 }, (_, i) => i).filter((i) => i % 5 && i % 3).length);
      expect(u!.sample).toMatch(/^app "\d+" \\ ✓$/);
      // Each event landed on its own call: the batch's events travel in order, a missing one as none.
      const rows = await g.gw.deps.db.query<{ request_id: string; completion_tokens: number; app: string | null }>(
        "select request_id, completion_tokens, app from usage_events where request_id = any($1::uuid[])",
        [ids],
      );
      for (const r of rows) {
        const i = ids.indexOf(r.request_id);
        expect(i % 5).not.toBe(0);
        expect(r.completion_tokens).toBe(i);
        expect(r.app).toBe(i % 3 ? `app "${i}" \\ ✓` : null);
      }
      const [m] = await g.gw.deps.db.query<{ spent: string; held: string; requests: number }>(
        "select spent_micro::text as spent, held_micro::text as held, requests::int as requests from key_monthly where key_id = $1",
        [a.keyId],
      );
      expect(m!.requests).toBe(40);
      expect(BigInt(m!.held)).toBe(0n);
    });

    test("a request id held twice in one burst is refused the second time", async () => {
      const a = await account(1_000);
      const ledger = new SqlLedger(g.gw.deps.db);
      const id = crypto.randomUUID();
      const burst = await Promise.all([
        ...Array.from({ length: 10 }, () =>
          ledger.hold({
            id: crypto.randomUUID(),
            userId: a.userId,
            keyId: a.keyId,
            amountMicro: 1_000n,
            tokens: 1,
            ttlSeconds: 900,
          }),
        ),
        ledger.hold({ id, userId: a.userId, keyId: a.keyId, amountMicro: 1_000n, tokens: 1, ttlSeconds: 900 }),
        ledger.hold({ id, userId: a.userId, keyId: a.keyId, amountMicro: 1_000n, tokens: 1, ttlSeconds: 900 }),
      ]);
      expect(burst.slice(0, 10)).toEqual(Array(10).fill("ok"));
      expect(burst.slice(10).sort()).toEqual(["duplicate", "ok"]);
      expect((await money(a.userId)).held).toBe(11_000n);
    });

    test("holds past the balance in one burst: exactly those that fit succeed", async () => {
      const a = await account(1); // 1 KRW = 1,000,000 micro-won
      const ledger = new SqlLedger(g.gw.deps.db);
      const out = await Promise.all(
        Array.from({ length: 30 }, () =>
          ledger.hold({
            id: crypto.randomUUID(),
            userId: a.userId,
            keyId: a.keyId,
            amountMicro: 100_000n,
            tokens: 1,
            ttlSeconds: 900,
          }),
        ),
      );
      expect(out.filter((r) => r === "ok").length).toBe(10);
      expect(out.filter((r) => r === "insufficient_credits").length).toBe(20);
      expect(await money(a.userId)).toEqual({ balance: 1_000_000n, held: 1_000_000n });
    });

    test("one burst of settles and holds of several accounts, one with an org budget: each gets what one by one would", async () => {
      const plain = await account(1_000);
      const member = await account(1_000);
      const org = await g.admin("POST", "/v1/admin/orgs", {
        name: `batch-${crypto.randomUUID().slice(0, 6)}`,
        owner_user_id: plain.userId,
      });
      expect(org.status).toBe(201);
      // 1 KRW a month for the member: exactly ten 0.1 KRW holds fit.
      expect(
        (
          await g.admin("POST", `/v1/admin/orgs/${org.body.org_id}/members`, {
            user_id: member.userId,
            role: "member",
            monthly_budget_krw: 1,
          })
        ).status,
      ).toBe(201);
      const { db, batches } = counting(g.gw.deps.db);
      const ledger = new SqlLedger(db);
      const hold = (a: { userId: string; keyId: string }, id = crypto.randomUUID()) =>
        ledger
          .hold({ id, userId: a.userId, keyId: a.keyId, amountMicro: 100_000n, tokens: 1, ttlSeconds: 900 })
          .then((r) => ({ id, r }));
      const first = await Promise.all(Array.from({ length: 10 }, () => hold(plain)));
      expect(first.map((x) => x.r)).toEqual(Array(10).fill("ok"));
      // Settles of the first ten go out together with new holds of both accounts.
      const burst = await Promise.all([
        ...first.map((x, i) => ledger.settle(x.id, 40_000n, 2, event(i))),
        ...Array.from({ length: 10 }, () => hold(plain)),
        ...Array.from({ length: 14 }, () => hold(member)),
      ]);
      expect(batches()).toBeGreaterThan(0);
      expect(burst.slice(0, 10)).toEqual(Array(10).fill(true));
      const plainHolds = burst.slice(10, 20) as { r: string }[];
      const memberHolds = burst.slice(20) as { r: string }[];
      expect(plainHolds.map((x) => x.r)).toEqual(Array(10).fill("ok"));
      expect(memberHolds.filter((x) => x.r === "ok")).toHaveLength(10);
      expect(memberHolds.filter((x) => x.r === "org_member_monthly_budget_exceeded")).toHaveLength(4);
      // The books: ten settled at 0.04 KRW, ten and ten still held.
      expect(await money(plain.userId)).toEqual({ balance: 1_000_000_000n - 400_000n, held: 1_000_000n });
      expect(await money(member.userId)).toEqual({ balance: 1_000_000_000n, held: 1_000_000n });
      const [om] = await g.gw.deps.db.query<{ h: string }>(
        "select held_micro::text as h from org_member_monthly where user_id = $1",
        [member.userId],
      );
      expect(om!.h).toBe("1000000");
      const [entries] = await g.gw.deps.db.query<{ n: number }>(
        "select count(*)::int as n from ledger_entries where kind = 'charge' and user_id = $1",
        [plain.userId],
      );
      expect(entries!.n).toBe(10);
    });

    test("a batched settle finds its holds by primary key, never by reading the open-holds index", async () => {
      // Every settle leaves a dead entry in the partial index of open holds until vacuum; a plan
      // that reads that index grows slower with every call (drizzle/0010). Counted in the
      // statement's own transaction: index scans of each index while the settles run.
      const a = await account(1_000);
      const ledger = new SqlLedger(g.gw.deps.db);
      for (let round = 0; round < 3; round++) {
        const ids = Array.from({ length: 20 }, () => crypto.randomUUID());
        for (const id of ids)
          expect(
            await ledger.hold({
              id,
              userId: a.userId,
              keyId: a.keyId,
              amountMicro: 1_000n,
              tokens: 1,
              ttlSeconds: 900,
            }),
          ).toBe("ok");
        const list = `'{${ids.join(",")}}'::uuid[]`;
        const scans = await g.gw.deps.db.orm.transaction(async (tx) => {
          const settled: { r: string }[] = (await tx.execute(
            sql.raw(
              `select r from gw_settle_many(${list}, array_fill(10::bigint, array[20]), array_fill(1::bigint, array[20]), array_fill(null::jsonb, array[20]))`,
            ),
          )) as never;
          expect(settled.map((x) => x.r)).toEqual(Array(20).fill("ok"));
          const [row]: { open: number; pkey: number }[] = (await tx.execute(
            sql.raw(
              `select pg_stat_get_xact_numscans('holds_open_idx'::regclass)::int as open, pg_stat_get_xact_numscans('holds_pkey'::regclass)::int as pkey`,
            ),
          )) as never;
          return row!;
        });
        expect(scans.open).toBe(0);
        expect(scans.pkey).toBeGreaterThan(0);
      }
      expect(await money(a.userId)).toEqual({ balance: 1_000_000_000n - 600n, held: 0n });
    });

    test("a small step's generic plans stay inside it: the transaction's setting is back after", async () => {
      // gw_ledger_step forces generic plans for a step of a few calls (docs/decisions.md #63);
      // the rest of the caller's transaction must plan as configured.
      const a = await account(1_000);
      const month = currentMonth();
      const seen = await g.gw.deps.db.orm.transaction(async (tx) => {
        const [before]: { m: string }[] = (await tx.execute(
          sql.raw("select current_setting('plan_cache_mode') as m"),
        )) as never;
        const step: { r: string }[] = (await tx.execute(
          sql`select x.r from gw_ledger_step('{}'::uuid[], '{}'::bigint[], '{}'::bigint[], '{}'::jsonb[],
                array[${crypto.randomUUID()}]::uuid[], array[${a.userId}]::uuid[], array[${a.keyId}]::uuid[],
                array[${month}]::text[], array[1000]::bigint[], array[1]::bigint[], array[900]::int[]) x`,
        )) as never;
        const [after]: { m: string }[] = (await tx.execute(
          sql.raw("select current_setting('plan_cache_mode') as m"),
        )) as never;
        return { before: before!.m, step: step.map((x) => x.r), after: after!.m };
      });
      expect(seen.step).toEqual(["ok"]);
      expect(seen.after).toBe(seen.before);
      expect(seen.before).not.toBe("force_generic_plan");
      expect((await money(a.userId)).held).toBe(1_000n);
    });

    test("a call that makes its batch fail fails alone; its neighbours succeed", async () => {
      const a = await account(1_000);
      const { db, batches } = counting(g.gw.deps.db);
      const ledger = new SqlLedger(db);
      const ok = () =>
        ledger.hold({
          id: crypto.randomUUID(),
          userId: a.userId,
          keyId: a.keyId,
          amountMicro: 1_000n,
          tokens: 1,
          ttlSeconds: 900,
        });
      // A TTL beyond PostgreSQL's int fails the whole statement it rides in.
      const bad = ledger.hold({
        id: crypto.randomUUID(),
        userId: a.userId,
        keyId: a.keyId,
        amountMicro: 1_000n,
        tokens: 1,
        ttlSeconds: 3_000_000_000,
      });
      const results = await Promise.allSettled([ok(), ok(), ok(), ok(), bad, ok(), ok(), ok(), ok()]);
      expect(batches()).toBeGreaterThan(0); // the bad call did ride in a batch
      expect(results[4]!.status).toBe("rejected");
      expect(results.filter((r) => r.status === "fulfilled" && r.value === "ok").length).toBe(8);
      expect((await money(a.userId)).held).toBe(8_000n);
    });
  });
}
