/**
 * A leased call's charge is appended rows; its money moves once per lease step (drizzle/0026,
 * docs/ledger.md "Where a leased call's money is"). Against the real statements on PostgreSQL:
 * charges of an open lease sent at once, each call charged once; no balance moved until the
 * lease's trim or close, then exactly what the calls were charged; a charge after the close
 * charged once from free credits; calls a lease does not cover paid from free credits, never
 * below zero, even when batches sent at once outgrow it together.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { currentMonth, type UsageEvent } from "../../src/core/billing/ledger";
import type { LeaseCharge } from "../../src/core/billing/ledger-store";
import { SqlLeaseStore } from "../../src/db/repos/ledger-store";
import { postgresAvailable, startTestGateway, type TestGateway } from "../harness";
import { checkBooks } from "../support/books";

setDefaultTimeout(30_000);

const event = (tokens: number): UsageEvent => ({
  model: "gpt-4o-mini",
  provider: "openai",
  maker: "openai",
  modality: "text",
  app: null,
  status: 200,
  promptTokens: 10,
  completionTokens: tokens - 10,
  cachedTokens: 0,
  cacheWriteTokens: 0,
  fxMilli: 1_400_000n,
  latencyMs: 20,
  cached: false,
});

if (await postgresAvailable()) {
  describe("leased charges are appended; the money moves once per lease step (pg)", () => {
    let g: TestGateway;
    let store: SqlLeaseStore;
    beforeAll(async () => {
      g = await startTestGateway({ db: "pg" });
      store = new SqlLeaseStore(g.gw.deps.db);
    });
    afterAll(async () => {
      await g?.stop();
    });

    const money = async (userId: string, keyId: string) => {
      const [r] = await g.gw.deps.db.query<{
        balance: string;
        held: string;
        spent: string;
        requests: number;
        tokens: string;
      }>(
        `select u.balance_micro::text as balance, u.held_micro::text as held, coalesce(k.spent_micro, 0)::text as spent,
                coalesce(k.requests, 0)::int as requests, coalesce(k.tokens, 0)::text as tokens
           from users u left join key_monthly k on k.key_id = $2 where u.id = $1`,
        [userId, keyId],
      );
      return r!;
    };

    async function open(a: { userId: string; keyId: string }, amountMicro: bigint): Promise<string> {
      const id = crypto.randomUUID();
      const opened = await store.open({
        id,
        userId: a.userId,
        keyId: a.keyId,
        month: currentMonth(),
        amountMicro,
        tokens: 0,
        ttlSeconds: 60,
      });
      expect(opened.outcome).toBe("ok");
      return id;
    }
    async function leased(creditKrw: number, leaseMicro: bigint) {
      const u = await g.newUser({ creditKrw });
      const k = await g.newKey(u);
      const a = { userId: u.id, keyId: k.id as string };
      return { ...a, lease: await open(a, leaseMicro) };
    }
    const calls = (lease: string, n: number, costMicro: bigint, holdMicro: bigint): LeaseCharge[] =>
      Array.from({ length: n }, () => ({
        lease,
        id: crypto.randomUUID(),
        costMicro,
        holdMicro,
        tokens: 30,
        event: event(30),
      }));

    test("charges sent at once are each charged once; balances move only at the trim, then exactly", async () => {
      const a = await leased(1000, 100_000_000n);
      const before = await money(a.userId, a.keyId);
      const batches = Array.from({ length: 6 }, () => calls(a.lease, 20, 300_000n, 500_000n));
      const answers = await Promise.all(batches.map((b) => store.charge(b)));
      expect(answers.flat().every((r) => r === "ok")).toBe(true);
      // The same calls again: already charged (the ledger entry is the receipt, drizzle/0027).
      expect((await store.charge(batches[0]!)).every((r) => r === "not_open")).toBe(true);
      // Appended only: nothing moved yet, the lease's whole room still held.
      expect(await money(a.userId, a.keyId)).toEqual(before);
      expect(await store.trim(a.lease, { micro: 10_000_000n, tokens: 0 }, { close: false })).toBe("ok");
      const moved = await money(a.userId, a.keyId);
      expect(BigInt(before.balance) - BigInt(moved.balance)).toBe(120n * 300_000n);
      expect(BigInt(moved.spent)).toBe(120n * 300_000n);
      expect(moved.requests).toBe(120);
      expect(moved.tokens).toBe(String(120 * 30));
      expect(moved.held).toBe("10000000");
      // A call charged after the trim moves at the close.
      expect(await store.charge(calls(a.lease, 1, 700_000n, 400_000n))).toEqual(["capped"]);
      expect(await store.trim(a.lease, { micro: 0n, tokens: 0 }, { close: true })).toBe("ok");
      const closed = await money(a.userId, a.keyId);
      expect(BigInt(before.balance) - BigInt(closed.balance)).toBe(120n * 300_000n + 400_000n);
      expect(closed.held).toBe("0");
      expect(closed.requests).toBe(121);
      expect((await checkBooks(g.gw.deps.db, [a.userId])).violations).toEqual([]);
    });

    test("a charge after the close is charged once, from free credits", async () => {
      const a = await leased(1000, 5_000_000n);
      expect(await store.trim(a.lease, { micro: 0n, tokens: 0 }, { close: true })).toBe("ok");
      const before = await money(a.userId, a.keyId);
      const late = calls(a.lease, 2, 1_000_000n, 2_000_000n);
      expect(await store.charge(late)).toEqual(["ok", "ok"]);
      expect(await store.charge(late)).toEqual(["not_open", "not_open"]);
      expect(BigInt(before.balance) - BigInt((await money(a.userId, a.keyId)).balance)).toBe(2_000_000n);
      expect((await checkBooks(g.gw.deps.db, [a.userId])).violations).toEqual([]);
    });

    test("each call of a batch gets its own usage event; one sent without gets a bare one", async () => {
      const a = await leased(1000, 100_000_000n);
      const batch = calls(a.lease, 12, 100_000n, 500_000n).map((c, i) => ({
        ...c,
        event: i % 4 === 3 ? null : { ...event(20 + i), app: `app "${i}" \\ ✓ [${i}]` },
      }));
      expect((await store.charge(batch)).every((r) => r === "ok")).toBe(true);
      const rows = await g.gw.deps.db.query<{
        request_id: string;
        model: string;
        completion_tokens: number;
        app: string | null;
      }>("select request_id, model, completion_tokens, app from usage_events where request_id = any($1::uuid[])", [
        batch.map((c) => c.id),
      ]);
      expect(rows).toHaveLength(12);
      for (const r of rows) {
        const i = batch.findIndex((c) => c.id === r.request_id);
        if (i % 4 === 3) expect(r).toMatchObject({ model: "unknown", completion_tokens: 0, app: null });
        else
          expect(r).toMatchObject({ model: "gpt-4o-mini", completion_tokens: 10 + i, app: `app "${i}" \\ ✓ [${i}]` });
      }
    });

    test("the same calls sent twice at once, free ones too, get one entry and one usage event each", async () => {
      const rows = async (ids: string[]) => {
        const [r] = await g.gw.deps.db.query<{ entries: number; events: number }>(
          `select (select count(*)::int from ledger_entries where request_id = any($1::uuid[])) as entries,
                  (select count(*)::int from usage_events where request_id = any($1::uuid[])) as events`,
          [ids],
        );
        return r!;
      };
      const a = await leased(1000, 100_000_000n);
      const open = [...calls(a.lease, 3, 300_000n, 500_000n), ...calls(a.lease, 2, 0n, 500_000n)];
      const answers = await Promise.all([store.charge(open), store.charge(open)]);
      expect(answers.flat().filter((r) => r === "ok")).toHaveLength(5);
      expect(await rows(open.map((c) => c.id))).toEqual({ entries: 5, events: 5 });
      // After the close (the late path): a free call is charged once as well.
      expect(await store.trim(a.lease, { micro: 0n, tokens: 0 }, { close: true })).toBe("ok");
      const late = calls(a.lease, 2, 0n, 500_000n);
      const lateAnswers = await Promise.all([store.charge(late), store.charge(late)]);
      expect(lateAnswers.flat().filter((r) => r === "ok")).toHaveLength(2);
      expect(await store.charge(late)).toEqual(["not_open", "not_open"]);
      expect(await rows(late.map((c) => c.id))).toEqual({ entries: 2, events: 2 });
      expect((await checkBooks(g.gw.deps.db, [a.userId])).violations).toEqual([]);
    });

    test("calls their lease does not cover: the lease pays what it covers, free credits the rest, never below zero", async () => {
      // 3 KRW of credit, a lease of 1 KRW: four calls of 1 KRW in one statement.
      const u = await g.newUser({ creditKrw: 0 });
      const k = await g.newKey(u);
      const a = { userId: u.id, keyId: k.id as string };
      await g.gw.deps.db.query("update users set balance_micro = 3000000 where id = $1", [a.userId]);
      const lease = await open(a, 1_000_000n);
      expect(await store.charge(calls(lease, 4, 1_000_000n, 1_000_000n))).toEqual(["ok", "ok", "ok", "capped"]);
      expect(await store.trim(lease, { micro: 0n, tokens: 0 }, { close: true })).toBe("ok");
      expect(await money(a.userId, a.keyId)).toMatchObject({ balance: "0", held: "0" });
      // What was paid is what the usage events say and what the ledger entries say.
      const [paid] = await g.gw.deps.db.query<{ events: string; entries: string }>(
        `select (select sum(cost_micro) from usage_events where user_id = $1)::text as events,
                (select -sum(amount_micro) from ledger_entries where user_id = $1 and kind = 'charge')::text as entries`,
        [a.userId],
      );
      expect(paid).toEqual({ events: "3000000", entries: "3000000" });
    });

    test("batches sent at once that together outgrow their lease never take the balance below zero", async () => {
      // Each batch alone fits the lease; together they do not (only a policy that over-promised
      // sends that). Whichever way the statements interleave, the balance stays at or above
      // zero and equals the sum of the account's ledger entries.
      const u = await g.newUser({ creditKrw: 0 });
      const k = await g.newKey(u);
      const a = { userId: u.id, keyId: k.id as string };
      await g.gw.deps.db.query("update users set balance_micro = 3000000 where id = $1", [a.userId]);
      const lease = await open(a, 2_000_000n);
      await Promise.all(Array.from({ length: 4 }, () => store.charge(calls(lease, 2, 1_000_000n, 1_000_000n))));
      expect(await store.trim(lease, { micro: 0n, tokens: 0 }, { close: true })).toBe("ok");
      const m = await money(a.userId, a.keyId);
      expect(BigInt(m.balance)).toBeGreaterThanOrEqual(0n);
      expect(m.held).toBe("0");
      const [l] = await g.gw.deps.db.query<{ sum: string }>(
        "select (3000000 + coalesce(sum(amount_micro), 0))::text as sum from ledger_entries where user_id = $1 and kind <> 'topup'",
        [a.userId],
      );
      expect(l!.sum).toBe(m.balance);
    });
  });
}
