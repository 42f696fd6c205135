/**
 * Racing two instances for the same money: a user's credits and a key's monthly budget cannot
 * be overspent by sending concurrent calls through two gateways on one PostgreSQL database
 * (each hold checks and reserves in one statement under the account's row lock). Other
 * With credit leases (src/core/billing/leasing.ts) both instances hold a busy key's calls in memory
 * against their own leases, and the budget still holds. Other multi-instance properties are covered elsewhere: key deletion and settings
 * (test/http/multi-instance.test.ts), the Redis rate limit (test/http/errors-limits.test.ts),
 * policies (test/routing/invalidation.test.ts), video polling (test/video/pool.test.ts).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { postgresAvailable, type TestGateway } from "../harness";
import { fastUser, twoInstancesOnPostgres } from "../support/http";
import { checkBooks } from "../support/books";

const pg = await postgresAvailable();

describe.skipIf(!pg)("two instances racing for one account", () => {
  let a: TestGateway;
  let b: TestGateway;
  let stop: () => Promise<void>;
  beforeAll(async () => {
    // Leases are off by default; these races ran with them on and keep doing so (the lease test needs them).
    ({ a, b, stop } = await twoInstancesOnPostgres({ LEDGER_LEASES: "on" }));
  }, 60_000);
  afterAll(async () => {
    await stop?.();
  });

  const body = (i: number) => ({
    model: "gpt-4o",
    messages: [{ role: "user", content: `race ${i} ${crypto.randomUUID()}` }],
    max_tokens: 2000,
  });

  test("credits: concurrent calls through both instances never overspend; the books balance", async () => {
    // gpt-4o's hold for 2,000 output tokens is some tens of won: 60 KRW of credit covers a few.
    const u = await fastUser(a, { creditKrw: 60 });
    const k = await a.newKey(u);
    const replies = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        (i % 2 ? a : b).call("POST", "/v1/chat/completions", { token: k.key, body: body(i) }),
      ),
    );
    const statuses = replies.map((r) => r.status);
    const ok = statuses.filter((s) => s === 200).length;
    expect(ok).toBeGreaterThan(0);
    expect(statuses.filter((s) => s === 402).length).toBeGreaterThan(0);
    expect(statuses.every((s) => s === 200 || s === 402)).toBe(true);
    await Promise.all([a.gw.settlements.quiesce(), b.gw.settlements.quiesce()]);
    const [row] = await a.gw.deps.db.query<{ balance: string; held: string }>(
      "select balance_micro::text as balance, held_micro::text as held from users where id = $1",
      [u.id],
    );
    expect(BigInt(row!.balance)).toBeGreaterThanOrEqual(0n);
    expect(row!.held).toBe("0");
    const books = await checkBooks(a.gw.deps.db, [u.id]);
    expect(books.violations).toEqual([]);
    expect(books.settledHolds).toBe(ok);
    // Every 200 was charged, and the charges fit in the credit.
    expect(books.chargesKrw).toBeLessThanOrEqual(60);
  }, 60_000);

  test("a key's monthly budget holds across instances", async () => {
    const u = await fastUser(a, { creditKrw: 10_000 });
    const k = await a.newKey(u, { monthly_budget_krw: 50 });
    const replies = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        (i % 2 ? a : b).call("POST", "/v1/chat/completions", { token: k.key, body: body(i) }),
      ),
    );
    const statuses = replies.map((r) => r.status);
    expect(statuses.filter((s) => s === 200).length).toBeGreaterThan(0);
    expect(statuses.filter((s) => s === 402).length).toBeGreaterThan(0);
    expect(
      replies.filter((r) => r.status === 402).every((r) => r.body.detail.error === "monthly_budget_exceeded"),
    ).toBe(true);
    expect(statuses.every((s) => s === 200 || s === 402)).toBe(true);
    await Promise.all([a.gw.settlements.quiesce(), b.gw.settlements.quiesce()]);
    const [m] = await a.gw.deps.db.query<{ spent: string; held: string }>(
      "select spent_micro::text as spent, held_micro::text as held from key_monthly where key_id = $1",
      [k.id],
    );
    expect(BigInt(m!.spent)).toBeLessThanOrEqual(50_000_000n);
    expect(m!.held).toBe("0");
    expect((await checkBooks(a.gw.deps.db, [u.id])).violations).toEqual([]);
  }, 60_000);

  test("credit leases on both instances never overspend a key's budget; every success charged once; nothing held after", async () => {
    const u = await fastUser(a, { creditKrw: 10_000 });
    const k = await a.newKey(u, { monthly_budget_krw: 40 });
    // A few tokens of gpt-4o-mini: every hold and every charge is the 0.1 KRW minimum, so the
    // budget affords exactly 400 calls; both instances' keys are busy, so both take leases.
    const cheap = { model: "gpt-4o-mini", messages: [{ role: "user", content: "hi" }], max_tokens: 5 };
    const statuses: number[] = [];
    const refusals = new Set<string>();
    await Promise.all(
      [a, b].flatMap((g) =>
        Array.from({ length: 16 }, async () => {
          for (let i = 0; i < 40; i++) {
            const r = await g.call("POST", "/v1/chat/completions", { token: k.key, body: cheap });
            statuses.push(r.status);
            if (r.status === 402) refusals.add(r.body.detail.error);
          }
        }),
      ),
    );
    const ok = statuses.filter((s) => s === 200).length;
    expect(statuses.every((s) => s === 200 || s === 402)).toBe(true);
    expect([...refusals]).toEqual(["monthly_budget_exceeded"]);
    expect(ok).toBeLessThanOrEqual(400);
    // A lease still held on one instance can refuse the other a few of the last calls; no more.
    expect(ok).toBeGreaterThanOrEqual(300);
    for (const g of [a, b]) {
      await g.gw.settlements.quiesce();
      await g.gw.ledger.leases!.retireAll();
    }
    const [leases] = await a.gw.deps.db.query<{ n: number }>(
      "select count(*)::int as n from holds where lease and user_id = $1",
      [u.id],
    );
    expect(leases!.n).toBeGreaterThan(0);
    console.log(
      `[money-race leases] ${ok} of the 400 calls the budget affords succeeded (${statuses.length} sent, ${leases!.n} leases)`,
    );
    const [m] = await a.gw.deps.db.query<{ spent: string; held: string; tokens: string; requests: number }>(
      "select spent_micro::text as spent, held_micro::text as held, held_tokens::text as tokens, requests::int as requests from key_monthly where key_id = $1",
      [k.id],
    );
    expect(m).toEqual({ spent: String(ok * 100_000), held: "0", tokens: "0", requests: ok });
    expect((await checkBooks(a.gw.deps.db, [u.id])).violations).toEqual([]);
  }, 60_000);
  test("a hold refused for room another instance's lease holds is placed once that instance gives it back", async () => {
    const u = await fastUser(a, { creditKrw: 1_000 });
    const k = await a.newKey(u);
    const db = a.gw.deps.db;
    const small = () => ({
      id: crypto.randomUUID(),
      userId: u.id,
      keyId: k.id,
      amountMicro: 10_000n,
      tokens: 50,
      ttlSeconds: 60,
      leasable: true,
    });
    // Instance a: a busy key takes a lease (a quarter of the key's room); its calls settle.
    let leased = false;
    for (let i = 0; i < 2000 && !leased; i++) {
      const h = small();
      expect(await a.gw.ledger.hold(h)).toBe("ok");
      leased = a.gw.ledger.leases!.has(h.id);
      expect(await a.gw.ledger.settle(h.id, 0n, 0, null)).toBe(true);
    }
    expect(leased).toBe(true);
    const [row] = await db.query<{ free: string; leased: string }>(
      "select (u.balance_micro - u.held_micro)::text as free, (select coalesce(sum(amount_micro), 0) from holds where user_id = u.id and lease and status = 'open')::text as leased from users u where u.id = $1",
      [u.id],
    );
    const free = BigInt(row!.free);
    const leasedMicro = BigInt(row!.leased);
    expect(leasedMicro).toBeGreaterThan(0n);
    // Instance b: a call bigger than what is free beside the lease, smaller than the account's room.
    const big = {
      id: crypto.randomUUID(),
      userId: u.id,
      keyId: null,
      amountMicro: free + leasedMicro / 2n,
      tokens: 0,
      ttlSeconds: 60,
    };
    expect(await b.gw.ledger.hold(big)).toBe("ok");
    expect(await b.gw.ledger.release(big.id, null)).toBe(true);
    // More than the whole balance is still refused.
    expect(await b.gw.ledger.hold({ ...big, id: crypto.randomUUID(), amountMicro: 1_000_000_001n })).toBe(
      "insufficient_credits",
    );
    expect((await checkBooks(db, [u.id])).violations).toEqual([]);
  }, 60_000);
});
