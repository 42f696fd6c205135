/**
 * A property test of the ledger, on PostgreSQL and PGlite: a seeded random mix of real chat
 * calls over HTTP (successes, upstream failures, rejections, rate limits, streams, mid-stream
 * drops, client aborts, cache hits, 402s) and thousands of direct hold/settle/release steps
 * (with double closes and sweeps, concurrently), then the books must balance for every user:
 * balance = top-ups − charges, nothing held, charges = usage-event costs, each request charged
 * at most once and never more than its hold, monthly key counters = their charges.
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from "bun:test";
import { dbKinds, startTestGateway, type TestGateway } from "../harness";
import { chatFetch, eventually, fastUser, money } from "../support/chat";

// Real servers and databases on a shared machine: generous per-test deadlines.
setDefaultTimeout(20_000);

/** mulberry32: small, seeded, good enough to pick test cases. */
function rng(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const SEED = Number(process.env.LEDGER_SEED ?? Date.now() % 1_000_000);
const MODELS = ["gpt-4o-mini", "gpt-4o", "claude-haiku-4-5", "gemini-2.5-flash", "deepseek-v3"];
const EVENT = {
  model: "gpt-4o-mini",
  provider: "openai",
  maker: "openai",
  modality: "text" as const,
  app: null,
  status: 200,
  promptTokens: 3,
  completionTokens: 5,
  cachedTokens: 0,
  cacheWriteTokens: 0,
  fxMilli: 1_400_000n,
  latencyMs: 1,
  cached: false,
};

/** Runs `tasks` with at most `n` in flight. */
async function pool<T>(n: number, tasks: (() => Promise<T>)[]): Promise<T[]> {
  const out: T[] = new Array(tasks.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: n }, async () => {
      while (next < tasks.length) {
        const i = next++;
        out[i] = await tasks[i]!();
      }
    }),
  );
  return out;
}

for (const kind of await dbKinds()) {
  describe(`ledger property on ${kind}`, () => {
    let g: TestGateway;
    beforeAll(async () => {
      // Credit leases (off by default) are on where they exist, so lease charges are in the books too.
      g = await startTestGateway({ db: kind, env: { LEDGER_LEASES: "on" } });
    }, 60_000);
    afterAll(async () => {
      await g?.stop();
    });

    test(`random calls and ledger steps keep the books balanced (seed ${SEED})`, async () => {
      const rand = rng(SEED + (kind === "pg" ? 1 : 2));
      const pick = <T>(xs: readonly T[]) => xs[Math.floor(rand() * xs.length)]!;
      const t0 = performance.now();

      // Tenants: some rich, some nearly broke (402s), keys with budgets, token limits and caches.
      const users = await Promise.all(
        Array.from({ length: 6 }, (_, i) => fastUser(g, { creditKrw: [2000, 500, 60, 15, 3, 1000][i] })),
      );
      for (const u of users.slice(0, 2))
        await g.admin("PATCH", `/v1/admin/users/${u.id}`, { xborder_training_consent: true });
      const keys: { key: string; userId: string }[] = [];
      const cacheKeys: string[] = [];
      for (const u of users) {
        for (const body of [
          {},
          { response_cache_mode: "exact" },
          { monthly_budget_krw: 40 },
          { monthly_token_limit: 30_000 },
        ]) {
          const k = await g.newKey(u, body);
          keys.push({ key: k.key, userId: u.id });
          if (body.response_cache_mode && cacheKeys.length < 2) cacheKeys.push(k.key);
        }
      }

      // Phase 1: real calls over HTTP.
      const CALLS = kind === "pg" ? 400 : 250;
      const statuses = new Map<number, number>();
      const calls = Array.from({ length: CALLS }, (_, i) => async () => {
        const k = pick(keys);
        const stream = rand() < 0.5;
        const r = rand();
        const tag = `n${i}-${SEED}`;
        if (rand() < 0.15) {
          // The same request again and again: the exact-cache keys answer it from the cache.
          const res = await chatFetch(g, pick(cacheKeys), {
            model: "gpt-4o-mini",
            messages: [{ role: "user", content: "repeat me" }],
            max_tokens: 50,
            stream,
          });
          statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
          await res.text();
          return;
        }
        let text = `call ${tag}`;
        if (r < 0.08) text += " [sim:fail=503]";
        else if (r < 0.16) text += ` ${tag} [sim:fail=503x1]`;
        else if (r < 0.2) text += " [sim:fail=400]";
        else if (r < 0.24) text += " [sim:fail=429]";
        else if (r < 0.34 && stream)
          text += ` [sim:tokens=${50 + Math.floor(rand() * 200)}] [sim:drop=${Math.floor(rand() * 3)}]`;
        else if (r < 0.5) text += ` [sim:tokens=${1 + Math.floor(rand() * 400)}]`;
        const abort = stream && rand() < 0.08;
        if (abort) text += " [sim:chunk_ms=30]";
        const body: Record<string, unknown> = {
          model: pick(MODELS),
          messages: [{ role: "user", content: text }],
          stream,
        };
        if (rand() < 0.7) body.max_tokens = 1 + Math.floor(rand() * 2000);
        const ac = new AbortController();
        try {
          const res = await chatFetch(g, k.key, body, { signal: ac.signal });
          statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
          if (abort && res.status === 200) {
            const reader = res.body!.getReader();
            await reader.read();
            ac.abort();
            await reader.cancel().catch(() => {});
          } else await res.text();
        } catch {
          /* the aborted read */
        }
      });
      await pool(8, calls);
      const httpMs = performance.now() - t0;

      // Phase 2: the ledger port directly, thousands of steps, with double closes and sweeps.
      const STEPS = kind === "pg" ? 2500 : 1200;
      const t1 = performance.now();
      const ids: string[] = [];
      const amounts = new Map<string, bigint>();
      const steps = Array.from({ length: STEPS }, () => async () => {
        const r = rand();
        const open = ids.length ? ids[Math.floor(rand() * ids.length)]! : null;
        if (r < 0.4 || !open) {
          const id = crypto.randomUUID();
          const u = pick(users);
          const amount = BigInt(1 + Math.floor(rand() * 3_000_000));
          const res = await g.gw.ledger.hold({
            id,
            userId: u.id,
            keyId: null,
            amountMicro: amount,
            tokens: 10,
            ttlSeconds: rand() < 0.05 ? 0 : 900,
          });
          if (res === "ok") {
            ids.push(id);
            amounts.set(id, amount);
          }
        } else if (r < 0.7) {
          // The chat service never charges more than it held (the hold is the upper bound).
          const cost = (amounts.get(open)! * BigInt(Math.floor(rand() * 1001))) / 1000n;
          await g.gw.ledger.settle(open, cost, 8, { ...EVENT });
        } else if (r < 0.95) {
          await g.gw.ledger.release(open, { ...EVENT, status: 502 });
        } else {
          await g.gw.ledger.sweepExpired(50);
        }
      });
      // Batches of concurrent steps (a settle and a release of one hold may race).
      await pool(6, steps);
      // Close whatever is still open (and let aborted HTTP streams finish settling).
      for (const id of ids) await g.gw.ledger.release(id, null);
      const quiet = await eventually(async () => {
        for (const u of users) if ((await money(g, u.id)).held !== 0n) return false;
        return true;
      }, 5000);
      expect(quiet).toBe(true);

      // The books, per user.
      const q = g.gw.deps.db.query.bind(g.gw.deps.db);
      for (const u of users) {
        const { balance, held } = await money(g, u.id);
        expect(held).toBe(0n);
        expect(balance).toBeGreaterThanOrEqual(0n);
        const [sums] = await q<{ topups: string; charges: string; n: string; distinct_ids: string }>(
          `select coalesce(sum(amount_micro) filter (where kind = 'topup'), 0)::text as topups,
                  coalesce(-sum(amount_micro) filter (where kind = 'charge'), 0)::text as charges,
                  count(*) filter (where kind = 'charge')::text as n,
                  count(distinct request_id) filter (where kind = 'charge')::text as distinct_ids
             from ledger_entries where user_id = $1`,
          [u.id],
        );
        expect(balance).toBe(BigInt(sums!.topups) - BigInt(sums!.charges));
        expect(sums!.n).toBe(sums!.distinct_ids);
        const [ev] = await q<{ c: string }>(
          "select coalesce(sum(cost_micro), 0)::text as c from usage_events where user_id = $1",
          [u.id],
        );
        expect(BigInt(ev!.c)).toBe(BigInt(sums!.charges));
        // Every charge belongs to exactly one settled hold, for the amount the hold recorded; a
        // call held against a credit lease is charged against the lease its entry names, and the
        // lease's charged amount is the sum of its calls'.
        const [mismatch] = await q<{ n: string }>(
          `select count(*)::text as n from ledger_entries e left join holds h on h.id = coalesce((e.meta->>'lease')::uuid, e.request_id)
            where e.user_id = $1 and e.kind = 'charge'
              and (h.id is null or h.status <> 'settled' or (not h.lease and h.charged_micro <> -e.amount_micro))`,
          [u.id],
        );
        expect(mismatch!.n).toBe("0");
        const [leases] = await q<{ n: string }>(
          `select count(*)::text as n from holds h where h.user_id = $1 and h.lease
              and coalesce(h.charged_micro, 0) <> (select coalesce(-sum(amount_micro), 0) from ledger_entries e where e.meta->>'lease' = h.id::text)`,
          [u.id],
        );
        expect(leases!.n).toBe("0");
        const [unbooked] = await q<{ n: string }>(
          `select count(*)::text as n from holds h where h.user_id = $1 and h.status = 'settled' and h.charged_micro > 0 and not h.lease
              and not exists (select 1 from ledger_entries e where e.request_id = h.id)`,
          [u.id],
        );
        expect(unbooked!.n).toBe("0");
        const [open] = await q<{ n: string }>(
          "select count(*)::text as n from holds where user_id = $1 and status = 'open'",
          [u.id],
        );
        expect(open!.n).toBe("0");
      }
      // Chat holds (the ones with a key) are never charged more than they held.
      // (A lease's amount is what it still holds, not what it held: it is left out.)
      const [over] = await q<{ n: string }>(
        "select count(*)::text as n from holds where key_id is not null and not lease and charged_micro > amount_micro",
      );
      expect(over!.n).toBe("0");
      // Monthly key counters equal their charges and hold nothing.
      const badKeys = await q<{ key_id: string }>(
        `select m.key_id from key_monthly m
           left join (select h.key_id, sum(h.charged_micro) as c from holds h where h.status = 'settled' and h.key_id is not null group by h.key_id) s on s.key_id = m.key_id
          where m.held_micro <> 0 or m.held_tokens <> 0 or m.spent_micro <> coalesce(s.c, 0)`,
      );
      expect(badKeys).toEqual([]);
      // The mix really exercised the paths it claims to.
      const seen = [...statuses.keys()].sort();
      for (const s of [200, 402, 429, 502]) expect([s, seen.includes(s)]).toEqual([s, true]);
      const [cachedHits] = await q<{ n: string }>("select count(*)::text as n from usage_events where cached");
      expect(Number(cachedHits!.n)).toBeGreaterThan(0);
      const [partials] = await q<{ n: string }>(
        "select count(*)::text as n from usage_events where status = 502 and cost_micro > 0",
      );
      expect(Number(partials!.n)).toBeGreaterThan(0);
      console.log(
        `ledger property on ${kind}: seed ${SEED}, ${CALLS} HTTP calls in ${Math.round(httpMs)} ms (statuses ${JSON.stringify(Object.fromEntries(statuses))}), ${STEPS} ledger steps in ${Math.round(performance.now() - t1)} ms, total ${Math.round(performance.now() - t0)} ms`,
      );
    }, 60_000);
  });
}
