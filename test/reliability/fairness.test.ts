/**
 * One account cannot starve the others, on a real gateway process whose
 * Bun fetch limit is lowered to 32 (the default is 256; a small one keeps the test light).
 * Unbounded, one account's slow streams would take every one of Bun's upstream request slots
 * and everybody else's calls would queue behind them. The account is held to its concurrency
 * limit (its extra calls get 429 and are not charged) and another tenant's latency does not move.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { freshPostgres, postgresAvailable } from "../harness";
import { openDatabase, type Database } from "../../src/db/client";
import { runMigrations } from "../../src/db/migrate";
import { checkBooks } from "../support/books";
import { call, GatewayProcess, SimProcess } from "../support/procs";
import { fundedAccount } from "../support/accounts";

const pg = await postgresAvailable();

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

describe.skipIf(!pg)("fairness between tenants (a real process, Bun's fetch limit 32)", () => {
  let fresh: { url: string; drop: () => Promise<void> };
  let db: Database;
  let sim: SimProcess;
  let g: GatewayProcess;

  beforeAll(async () => {
    fresh = await freshPostgres();
    db = await openDatabase({ url: fresh.url, max: 2 });
    await runMigrations(db);
    sim = await new SimProcess().start();
    g = await new GatewayProcess({
      ...sim.providerEnv(),
      DATABASE_URL: fresh.url,
      BUN_CONFIG_MAX_HTTP_REQUESTS: "32",
      UPSTREAM_MAX_CONCURRENT: "24",
      CONCURRENCY_PER_ACCOUNT: "8",
      CONCURRENCY_PER_KEY: "4",
      VIDEO_POLL_WORKERS: "0",
      STATS_ROLLUP_INTERVAL_MS: "0",
    }).start();
  }, 60_000);

  afterAll(async () => {
    await g?.stop();
    await sim?.stop();
    await db?.close();
    await fresh?.drop();
    g?.cleanup();
  });

  const account = (keys: number) => fundedAccount(db, g.url, { prefix: "fair", krw: 10_000, keys });

  const chatBody = (content: string, stream = false) => ({
    model: "gpt-4o-mini",
    max_tokens: 20,
    stream,
    messages: [{ role: "user", content }],
  });

  /** Five calls of the light tenant, one after the other: their latencies in ms. */
  async function lightCalls(key: string, tag: string): Promise<number[]> {
    const out: number[] = [];
    for (let i = 0; i < 5; i++) {
      const t0 = performance.now();
      const r = await call(g.url, "POST", "/v1/chat/completions", {
        token: key,
        body: chatBody(`light ${tag} ${i}`),
        signal: AbortSignal.timeout(20_000),
      });
      expect(r.status).toBe(200);
      out.push(performance.now() - t0);
    }
    return out;
  }

  test("one account's 48 slow streams over 6 keys: it gets its 8, the rest 429 uncharged; another tenant's latency is unchanged", async () => {
    const heavy = await account(6);
    const light = await account(1);
    await lightCalls(light.keys[0]!, "warm-up");
    const before = await lightCalls(light.keys[0]!, "before");

    // 8 streams per key, each waiting 2.5 s for its first byte: 48 upstream requests wanted at once.
    const heavyCalls = Array.from({ length: 48 }, (_, i) =>
      fetch(g.url + "/v1/chat/completions", {
        method: "POST",
        headers: { authorization: `Bearer ${heavy.keys[i % 6]}`, "content-type": "application/json" },
        body: JSON.stringify(chatBody(`heavy ${i} [sim:latency=2500]`, true)),
      }).then(async (r) => ({ status: r.status, retryAfter: r.headers.get("retry-after"), text: await r.text() })),
    );
    await Bun.sleep(400);
    const during = await lightCalls(light.keys[0]!, "during");
    const heavyDone = await Promise.all(heavyCalls);

    // Generous bounds: unbounded, the light calls would wait for the heavy streams (~2.5 s each).
    const slack = Math.max(5 * median(before), median(before) + 300);
    expect({
      before,
      during,
      medianOk: median(during) <= slack,
      maxOk: Math.max(...during) <= Math.max(...before) + 1000,
    }).toMatchObject({ medianOk: true, maxOk: true });

    const served = heavyDone.filter((r) => r.status === 200);
    const refused = heavyDone.filter((r) => r.status === 429);
    expect(served.length).toBe(8);
    expect(refused.length).toBe(40);
    for (const r of served) expect(r.text).toContain("[DONE]");
    for (const r of refused) {
      expect(JSON.parse(r.text).detail.error).toBe("concurrency_limit_exceeded");
      expect(Number(r.retryAfter)).toBeGreaterThanOrEqual(1);
    }

    // The books balance, and only the served calls were charged.
    await Bun.sleep(500); // settles land behind the answers
    const books = await checkBooks(db, [heavy.id, light.id]);
    expect(books.violations).toEqual([]);
    const [events] = await db.query<{ n: number }>("select count(*)::int as n from usage_events where user_id = $1", [
      heavy.id,
    ]);
    expect(events!.n).toBe(8);
  }, 60_000);
});
