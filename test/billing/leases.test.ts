/**
 * Credit leases (src/core/billing/leasing.ts, drizzle/0011): a busy key's calls are held in memory
 * against one database hold. PostgreSQL only (PGlite has no leases). What a user can observe:
 * every call charged exactly once with its usage event, nothing left held once the account is
 * read, limits that bite as without leases near their edge and at once when they change, and a lease
 * whose instance died closed by the sweeper with what its calls spent.
 */
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { postgresAvailable, startTestGateway, suiteGateway, type TestGateway } from "../harness";
import { chat, errorCode, fastUser, money, tenant, user } from "../support/chat";
import { SqlLedger } from "../../src/db/repos/ledger";
import { checkBooks } from "../support/books";
import { startHold } from "../../src/core/chat/hold";
import { Settlements } from "../../src/core/billing/settlements";
import { LEASE_RULES } from "../../src/core/billing/lease-policy";

setDefaultTimeout(30_000);

/** `n` chat calls, `width` at a time; their HTTP statuses. */
async function burst(g: TestGateway, key: string, n: number, width: number, maxTokens = 20): Promise<number[]> {
  const out: number[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < n) {
        next++;
        out.push((await chat(g, key, { model: "gpt-4o-mini", messages: user("hi"), max_tokens: maxTokens })).status);
      }
    }),
  );
  return out;
}

/** A 0.01 KRW hold of 50 tokens for the key's call, with a fresh id. */
const holdOf = (userId: string, keyId: string, leasable = true) => ({
  id: crypto.randomUUID(),
  userId,
  keyId,
  amountMicro: 10_000n,
  tokens: 50,
  ttlSeconds: 60,
  leasable,
});

/**
 * A burst of 40 holds makes the key busy and opens a lease (the key's room must be known: a
 * hold answered before). Returns the burst's holds, for the caller to release.
 */
async function burstUntilLeased(ledger: SqlLedger, userId: string, h: () => ReturnType<typeof holdOf>) {
  const burst = Array.from({ length: 40 }, h);
  expect(await Promise.all(burst.map((x) => ledger.hold(x)))).toEqual(Array(40).fill("ok"));
  for (let i = 0; i < 50 && !ledger.leases!.holdsFor(userId); i++) await Bun.sleep(20);
  expect(ledger.leases!.holdsFor(userId)).toBe(true);
  return burst;
}

const leaseRows = async (g: TestGateway, userId: string) =>
  g.gw.deps.db.query<{ id: string; status: string; charged: string | null; amount: string }>(
    "select id, status, charged_micro::text as charged, amount_micro::text as amount from holds where lease and user_id = $1",
    [userId],
  );

if (await postgresAvailable()) {
  describe("credit leases (pg)", () => {
    // Leases are off by default (README, "Credit leases for busy keys"): this suite turns them on.
    const gateway = suiteGateway({ db: "pg", env: { LEDGER_LEASES: "on" } });

    test("a busy key's calls are held against a lease: each charged once, with its event; nothing held once the account is read", async () => {
      const g = gateway();
      const { user: u, key } = await tenant(g, 1000);
      const statuses = await burst(g, key.key, 300, 32);
      expect(statuses.filter((s) => s !== 200)).toEqual([]);
      // Read with the API key, as an SDK user would, right after the burst.
      const me = await g.call("GET", "/v1/me", { token: key.key });
      expect(me.status).toBe(200);
      expect(me.body.held_krw).toBe(0);
      const leases = await leaseRows(g, u.id);
      expect(leases.length).toBeGreaterThan(0);
      expect(leases.every((l) => l.status === "settled" && l.amount === "0")).toBe(true);
      const [n] = await g.gw.deps.db.query<{ own: number; leased: number; events: number }>(
        `select (select count(*)::int from holds where user_id = $1 and not lease) as own,
                (select count(*)::int from ledger_entries where user_id = $1 and kind = 'charge' and meta ? 'lease') as leased,
                (select count(*)::int from usage_events where user_id = $1) as events`,
        [u.id],
      );
      // Fewer database holds than calls: the rest rode on leases.
      expect(n!.own).toBeLessThan(300);
      expect(n!.own + n!.leased).toBe(300);
      // Leased charges write the same usage record as the others (drizzle/0018: the API named).
      const [api] = await g.gw.deps.db.query<{ chat: number }>(
        "select count(*)::int as chat from usage_events where user_id = $1 and api = 'chat' and streamed = false",
        [u.id],
      );
      expect(api!.chat).toBe(300);
      expect(n!.events).toBe(300);
      expect((await checkBooks(g.gw.deps.db, [u.id])).violations).toEqual([]);
      const [k] = await g.gw.deps.db.query<{ requests: number; held: string; tokens: string }>(
        "select requests::int, held_micro::text as held, held_tokens::text as tokens from key_monthly where key_id = $1",
        [key.id],
      );
      expect(k).toEqual({ requests: 300, held: "0", tokens: "0" });
    });

    test("near its limit a key takes no lease: exactly the calls its budget covers succeed", async () => {
      const g = gateway();
      // Learn one call's hold, then give the key a budget for five of them.
      const probe = await tenant(g, 1000);
      expect(
        (await chat(g, probe.key.key, { model: "gpt-4o-mini", messages: user("hi"), max_tokens: 20 })).status,
      ).toBe(200);
      const [h] = await g.gw.deps.db.query<{ a: string }>(
        "select amount_micro::text as a from holds where user_id = $1 and not lease",
        [probe.user.id],
      );
      const hold = BigInt(h!.a);
      const { user: u, key } = await tenant(g, 1000);
      await g.gw.deps.db.query("update users set balance_micro = $2 where id = $1", [
        u.id,
        (hold * 5n + hold / 2n).toString(),
      ]);
      const statuses = await burst(g, key.key, 60, 30);
      expect(statuses.filter((s) => s === 200).length).toBeGreaterThanOrEqual(5);
      expect(statuses.filter((s) => s !== 200 && s !== 402)).toEqual([]);
      expect(await leaseRows(g, u.id)).toEqual([]);
      expect((await money(g, u.id)).held).toBe(0n);
    });

    test("a key deactivated while its lease is open is refused at once", async () => {
      const g = gateway();
      const { user: u, key } = await tenant(g, 1000);
      expect((await burst(g, key.key, 120, 32)).every((s) => s === 200)).toBe(true);
      const open = (await leaseRows(g, u.id)).filter((l) => l.status === "open");
      expect(open.length).toBeGreaterThan(0); // a lease is live: the next call would ride on it
      const patched = await g.call("PATCH", `/v1/keys/${key.id}`, { token: u.jwt, body: { monthly_budget_krw: 0 } });
      expect(patched.status).toBe(200);
      const r = await chat(g, key.key, { model: "gpt-4o-mini", messages: user("hi"), max_tokens: 20 });
      expect(r.status).toBe(402);
      expect(errorCode(r.body)).toBe("monthly_budget_exceeded");
      await g.gw.settlements.quiesce(u.id);
      expect((await g.call("GET", "/v1/me", { token: u.jwt })).body.held_krw).toBe(0);
    });

    test("a hold that only the room leased by this instance would cover is placed: the lease gives it back first", async () => {
      const g = gateway();
      const { user: u, key } = await tenant(g, 1000);
      expect((await burst(g, key.key, 120, 32)).every((s) => s === 200)).toBe(true);
      await g.gw.settlements.quiesce(u.id);
      expect((await leaseRows(g, u.id)).some((l) => l.status === "open")).toBe(true);
      const { balance, held } = await money(g, u.id);
      // One micro-won more than the database has free: it fits only with the lease's room back.
      const id = crypto.randomUUID();
      const r = await g.gw.ledger.hold({
        id,
        userId: u.id,
        keyId: key.id,
        amountMicro: balance - held + 1n,
        tokens: 1,
        ttlSeconds: 60,
      });
      expect(r).toBe("ok");
      expect(await g.gw.ledger.release(id, null)).toBe(true);
      expect(
        await g.gw.ledger.hold({
          id: crypto.randomUUID(),
          userId: u.id,
          keyId: key.id,
          amountMicro: balance + 1n,
          tokens: 1,
          ttlSeconds: 60,
        }),
      ).toBe("insufficient_credits");
    });

    test("a chat key holding a lease does not get a video submit of the same account a false 402 (840 KRW on a 994 KRW balance)", async () => {
      const g = gateway();
      const u = await fastUser(g, { creditKrw: 994 });
      const chatKey = await g.newKey(u);
      const videoKey = await g.newKey(u);
      // gpt-4o-mini at the default max_tokens holds ~3.4 KRW: the lease takes a quarter of the room (~248 KRW).
      expect((await burst(g, chatKey.key, 120, 32, 4096)).every((s) => s === 200)).toBe(true);
      await g.gw.settlements.quiesce(u.id);
      expect((await leaseRows(g, u.id)).some((l) => l.status === "open")).toBe(true);
      const { balance, held } = await money(g, u.id);
      expect(balance - held).toBeLessThan(840_000_000n); // what the database alone has free would refuse it
      // seedance-2-0, 720p, 6 s: 140 KRW a second.
      const r = await g.call("POST", "/v1/video/generations", {
        token: videoKey.key,
        body: { model: "seedance-2-0", prompt: "a paper boat", duration_seconds: 6 },
      });
      expect(r.status).toBe(202);
      const [job] = await g.gw.deps.db.query<{ a: string }>("select amount_micro::text as a from holds where id = $1", [
        r.body.job_id,
      ]);
      expect(job!.a).toBe("840000000");
      expect((await g.call("POST", `/v1/jobs/${r.body.job_id}/cancel`, { token: videoKey.key })).status).toBe(200);
      expect((await checkBooks(g.gw.deps.db, [u.id])).violations).toEqual([]);
    });

    test("LEDGER_LEASES=off: every call holds in the database", async () => {
      const off = await startTestGateway({ db: "pg", env: { LEDGER_LEASES: "off" } });
      try {
        expect(off.gw.ledger.leases).toBeNull();
        const { user: u, key } = await tenant(off, 1000);
        expect((await burst(off, key.key, 120, 32)).every((s) => s === 200)).toBe(true);
        expect(await leaseRows(off, u.id)).toEqual([]);
        const [n] = await off.gw.deps.db.query<{ n: number }>(
          "select count(*)::int as n from holds where user_id = $1",
          [u.id],
        );
        expect(n!.n).toBe(120);
      } finally {
        await off.stop();
      }
    });

    test("a lease that was on its way when the key's limits changed is closed unused", async () => {
      const g = gateway();
      const { user: u, key } = await tenant(g, 1000);
      const ledger = new SqlLedger(g.gw.deps.db, { leases: true });
      const h = () => holdOf(u.id, key.id);
      const first = h();
      expect(await ledger.hold(first)).toBe("ok"); // the key's room is known now
      // A burst makes the key busy: the lease is asked for while these holds are still on their way…
      const holds = Array.from({ length: 20 }, h);
      const answers = Promise.all(holds.map((x) => ledger.hold(x)));
      // …and the key's limits change before its answer arrives.
      await ledger.leases!.retireAll({ keyId: key.id });
      expect(await answers).toEqual(Array(20).fill("ok"));
      await Bun.sleep(100);
      expect(ledger.leases!.holdsFor(u.id)).toBe(false);
      const rows = await leaseRows(g, u.id);
      expect(rows.length).toBe(1);
      expect(rows[0]).toMatchObject({ status: "settled", amount: "0", charged: "0" });
      for (const x of [first, ...holds]) expect(await ledger.release(x.id, null)).toBe(true);
      expect(await money(g, u.id)).toEqual({ balance: 1_000_000_000n, held: 0n });
    });

    test("begin: a hold placed in memory only against an open lease, then settled once like any other", async () => {
      const g = gateway();
      const { user: u, key } = await tenant(g, 1000);
      const ledger = new SqlLedger(g.gw.deps.db, { leases: true });
      const h = (leasable = true) => holdOf(u.id, key.id, leasable);
      // No lease yet: nothing is placed, nothing is written.
      const cold = h();
      expect(ledger.begin(cold, false)).toBe("await");
      expect(await ledger.hold(cold)).toBe("ok");
      const burst = await burstUntilLeased(ledger, u.id, () => h());
      const [before] = await g.gw.deps.db.query<{ n: number }>(
        "select count(*)::int as n from holds where user_id = $1",
        [u.id],
      );
      // A call the key's owner named is never leased; an ordinary one is, without a statement.
      const named = h(false);
      expect(ledger.begin(named, false)).toBe("await");
      const warm = h();
      expect(ledger.begin(warm, false)).toBe("placed");
      const [after] = await g.gw.deps.db.query<{ n: number }>(
        "select count(*)::int as n from holds where user_id = $1",
        [u.id],
      );
      expect(after!.n).toBe(before!.n);
      expect(await ledger.hold(named)).toBe("ok"); // the named call's hold goes to the database
      // Settled once: a second settle of the same id finds it closed.
      expect(await ledger.settle(warm.id, 7_000n, 30, null)).toBe(true);
      expect(await ledger.settle(warm.id, 7_000n, 30, null)).toBe(false);
      for (const x of [cold, named, ...burst]) expect(await ledger.release(x.id, null)).toBe(true);
      await ledger.leases!.retireAll({ userId: u.id });
      await Bun.sleep(100);
      expect(await money(g, u.id)).toEqual({ balance: 1_000_000_000n - 7_000n, held: 0n });
      expect((await checkBooks(g.gw.deps.db, [u.id])).violations).toEqual([]);
    });

    test("a lease charge whose bookkeeping throws still answers its settle, once", async () => {
      const g = gateway();
      const { user: u, key } = await tenant(g, 1000);
      // A capped charge's report is bookkeeping after the statement: if it throws, the charge
      // must still be answered (the batcher answers a whole batch in one loop).
      const ledger = new SqlLedger(g.gw.deps.db, {
        leases: true,
        hooks: {
          onCapped: () => {
            throw new Error("hook broke");
          },
        },
      });
      const h = () => holdOf(u.id, key.id);
      const cold = h(); // the key's room is known once a hold was answered (a lease is sized from it)
      expect(await ledger.hold(cold)).toBe("ok");
      const burst = await burstUntilLeased(ledger, u.id, h);
      const warm = h();
      expect(ledger.begin(warm, false)).toBe("placed");
      // Far above its 10,000 micro-won hold: capped at it, and the hook throws.
      expect(await ledger.settle(warm.id, 5_000_000n, 30, null)).toBe(true);
      expect(await ledger.settle(warm.id, 5_000_000n, 30, null)).toBe(false);
      for (const x of [cold, ...burst]) expect(await ledger.release(x.id, null)).toBe(true);
      await ledger.leases!.retireAll({ userId: u.id });
      await Bun.sleep(100);
      expect(await money(g, u.id)).toEqual({ balance: 1_000_000_000n - 10_000n, held: 0n });
      expect((await checkBooks(g.gw.deps.db, [u.id])).violations).toEqual([]);
    });

    test("a call counts once toward making its key busy, though begin tried a lease first", async () => {
      const g = gateway();
      const { user: u, key } = await tenant(g, 1000);
      const ledger = new SqlLedger(g.gw.deps.db, { leases: true });
      const settlements = new Settlements(ledger);
      const h = () => holdOf(u.id, key.id);
      // The key's room is known once a hold was answered (a lease is sized from it).
      const known = h();
      expect(await ledger.hold(known)).toBe("ok");
      await ledger.release(known.id, null);
      await Bun.sleep(LEASE_RULES.busyWindowMs + 50); // a fresh busy window
      // One call short of busy, all within the busy window (started in one turn): no lease.
      const first = Array.from({ length: LEASE_RULES.busyCalls - 1 }, h);
      await Promise.all(first.map((x, i) => startHold(ledger, settlements, x, { overlap: i % 2 === 0 })));
      await Bun.sleep(50);
      expect(await leaseRows(g, u.id)).toEqual([]);
      for (const x of first) await ledger.release(x.id, null);
      expect(await money(g, u.id)).toEqual({ balance: 1_000_000_000n, held: 0n });
    });

    test("a lease left by a dead instance is closed by the sweeper with what its calls spent; a late charge still charges once", async () => {
      const g = gateway();
      const { user: u, key } = await tenant(g, 1000);
      const db = g.gw.deps.db;
      const dead = new SqlLedger(db, { leases: true }); // an instance of its own, never stopped
      const h = (id: string) => ({
        id,
        userId: u.id,
        keyId: key.id,
        amountMicro: 10_000n,
        tokens: 50,
        ttlSeconds: 60,
        leasable: true,
      });
      const first = crypto.randomUUID();
      expect(await dead.hold(h(first))).toBe("ok"); // the key's room is known now
      expect(await dead.settle(first, 0n, 0, null)).toBe(true);
      // A busy key: the lease opens on its way; keep asking until calls ride on it (on a loaded
      // machine a call may take long enough that the key is busy only after many).
      const ids: string[] = [];
      for (let i = 0; i < 2000 && ids.length < 3; i++) {
        const id = crypto.randomUUID();
        expect(await dead.hold(h(id))).toBe("ok");
        if (dead.leases!.has(id)) ids.push(id);
        else await dead.settle(id, 0n, 0, null);
        await Bun.sleep(1);
      }
      expect(ids.length).toBe(3);
      const event = {
        model: "gpt-4o-mini",
        provider: "openai",
        maker: "openai",
        modality: "text" as const,
        app: null,
        status: 200,
        promptTokens: 5,
        completionTokens: 5,
        cachedTokens: 0,
        cacheWriteTokens: 0,
        fxMilli: null,
        latencyMs: 1,
        cached: false,
      };
      expect(await dead.settle(ids[0]!, 7_000n, 10, event)).toBe(true);
      expect(await dead.settle(ids[0]!, 7_000n, 10, event)).toBe(false); // never twice
      // The instance dies; its lease expires and another instance's sweeper closes it.
      await db.query(
        "update holds set expires_at = now() - interval '1 second' where lease and user_id = $1 and status = 'open'",
        [u.id],
      );
      expect(await new SqlLedger(db).sweepExpired()).toBeGreaterThan(0);
      let m = await money(g, u.id);
      expect(m.held).toBe(0n);
      // A call that was still running settles late: charged to the balance, once.
      const before = m.balance;
      expect(await dead.settle(ids[1]!, 3_000n, 10, event)).toBe(true);
      m = await money(g, u.id);
      expect(before - m.balance).toBe(3_000n);
      expect(m.held).toBe(0n);
      await dead.release(ids[2]!, null);
      await dead.leases!.stop();
      expect((await checkBooks(db, [u.id])).violations).toEqual([]);
    });
  });
}
