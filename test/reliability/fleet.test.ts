/**
 * Four gateway instances on one PostgreSQL and one Redis, as four machines of a fleet would
 * run (each its own process, port and DATA_DIR; docs/scaling.md, "Many machines"). Eight
 * accounts with three keys each call all four at once (JSON and streams, some streams dropped
 * by the client): in SQL every answered call is charged exactly once and, once the instances
 * have shut down cleanly, the books balance to the micro-won with no hold left open. A key's
 * rate limit and an account's rate limit are each one count for the fleet: called through all
 * four instances, exactly the limit is served and the rest refused 429.
 */
import { expect, test } from "bun:test";
import { ADMIN_TOKEN, freshPostgres, postgresAvailable, redisAvailable } from "../harness";
import { openDatabase } from "../../src/db/client";
import { runMigrations } from "../../src/db/migrate";
import { UserRepo } from "../../src/db/repos/users";
import { signJwt } from "../../src/lib/jwt";
import { TEST_JWT_SECRET } from "../support/http";
import { checkBooks } from "../support/books";
import { call, GatewayProcess, SimProcess } from "../support/procs";

const INSTANCES = 4;
const ACCOUNTS = 8;
const KEYS_PER_ACCOUNT = 3;
const CALLS_PER_KEY = 12;
const KEY_RPM = 20;
const ACCOUNT_RPM = 60;
const MODELS = ["deepseek-v4-flash", "gpt-5-mini"];

type Outcome = { status: number; id: string | null; whole: boolean };

/** One call; a dropped stream is cut by the client after its first bytes. */
async function oneCall(base: string, key: string, model: string, mode: "json" | "stream" | "drop"): Promise<Outcome> {
  const ctl = new AbortController();
  const res = await fetch(`${base}/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify({
      model,
      messages: [{ role: "user", content: "hi [sim:chunk_ms=5] [sim:tokens=30]" }],
      max_tokens: 40,
      stream: mode !== "json",
    }),
    signal: ctl.signal,
  });
  const id = res.headers.get("x-request-id");
  if (mode === "drop" && res.status === 200) {
    const reader = res.body!.getReader();
    await reader.read();
    ctl.abort();
    await reader.cancel().catch(() => {});
    return { status: res.status, id, whole: false };
  }
  const text = await res.text();
  const whole = res.status === 200 && (mode === "json" || text.trimEnd().endsWith("data: [DONE]"));
  return { status: res.status, id, whole };
}

/** Runs `jobs` with at most `width` in flight. */
async function pool<T>(jobs: (() => Promise<T>)[], width: number): Promise<T[]> {
  const out: T[] = new Array(jobs.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < jobs.length) {
        const i = next++;
        out[i] = await jobs[i]!();
      }
    }),
  );
  return out;
}

test("four instances on one PostgreSQL and Redis: exact books, every limit shared", async () => {
  if (!(await postgresAvailable()) || !(await redisAvailable())) return;
  const fresh = await freshPostgres();
  const db = await openDatabase({ url: fresh.url, max: 4 });
  // Migrated once before the fleet starts (docs/scaling.md: one migration, not four racing).
  await runMigrations(db);
  const sim = await new SimProcess().start();
  const env = {
    ...sim.providerEnv(),
    DATABASE_URL: fresh.url,
    REDIS_URL: "redis://127.0.0.1:6379",
    RATE_LIMIT_RPM: String(KEY_RPM),
    ACCOUNT_RATE_LIMIT_RPM: String(ACCOUNT_RPM),
    LOG_REQUESTS: "false",
    VIDEO_POLL_WORKERS: "0",
  };
  const fleet = Array.from(
    { length: INSTANCES },
    (_, i) => new GatewayProcess({ ...env, ...(i > 0 && { STATS_ROLLUP_INTERVAL_MS: "0" }) }),
  );
  try {
    await Promise.all(fleet.map((g) => g.start()));
    const urls = fleet.map((g) => g.url);

    const users: string[] = [];
    const account = async (keys: number, topupKrw: number, n: number): Promise<string[]> => {
      const user = (await new UserRepo(db).create({
        email: `fl-${crypto.randomUUID().slice(0, 8)}@test.example`,
        passwordHash: "x",
        industry: "general",
        regulated: false,
      }))!;
      users.push(user.id);
      const jwt = signJwt({ sub: user.id, typ: "access" }, TEST_JWT_SECRET, 3600);
      const base = urls[n % INSTANCES]!;
      const topup = await call(base, "POST", `/v1/admin/users/${user.id}/topups`, {
        token: ADMIN_TOKEN,
        body: { amount_krw: topupKrw },
      });
      expect(topup.status).toBe(201);
      const out: string[] = [];
      for (let k = 0; k < keys; k++) {
        const r = await call(urls[(n + k) % INSTANCES]!, "POST", "/v1/keys", { token: jwt, body: { name: `k${k}` } });
        expect(r.status).toBe(201);
        out.push(r.body.key as string);
      }
      return out;
    };

    // Load: every key's calls spread over the four instances, below both limits.
    const keys = (
      await Promise.all(Array.from({ length: ACCOUNTS }, (_, a) => account(KEYS_PER_ACCOUNT, 5_000, a)))
    ).flat();
    const jobs: (() => Promise<Outcome>)[] = [];
    for (let c = 0; c < CALLS_PER_KEY; c++)
      for (let k = 0; k < keys.length; k++) {
        const j = jobs.length;
        const mode = j % 3 === 0 ? "stream" : j % 7 === 0 ? "drop" : "json";
        jobs.push(() => oneCall(urls[j % INSTANCES]!, keys[k]!, MODELS[j % MODELS.length]!, mode));
      }
    // The limits, hit through all four instances at once: one key over its own limit, and an
    // account whose four keys stay within theirs but together exceed the account's.
    const [limited] = await account(1, 1_000, 1);
    const keyJobs = Array.from(
      { length: KEY_RPM * 2 },
      (_, j) => () => oneCall(urls[j % INSTANCES]!, limited!, MODELS[0]!, "json"),
    );
    const acctKeys = await account(4, 1_000, 2);
    const perKey = 18; // 4 × 18 = 72 > ACCOUNT_RPM, each key's 18 ≤ KEY_RPM
    const acctJobs = Array.from(
      { length: 4 * perKey },
      (_, j) => () => oneCall(urls[(j + 1) % INSTANCES]!, acctKeys[j % 4]!, MODELS[1]!, "json"),
    );
    const [load, byKey, byAcct] = await Promise.all([pool(jobs, 24), pool(keyJobs, 8), pool(acctJobs, 8)]);

    expect(load.filter((o) => o.status !== 200)).toEqual([]);
    expect(byKey.filter((o) => o.status === 200)).toHaveLength(KEY_RPM);
    expect(byKey.filter((o) => o.status === 429)).toHaveLength(KEY_RPM);
    expect(byAcct.filter((o) => o.status === 200)).toHaveLength(ACCOUNT_RPM);
    expect(byAcct.filter((o) => o.status === 429)).toHaveLength(4 * perKey - ACCOUNT_RPM);

    // Every instance stops cleanly: what it held is settled or released before it exits.
    await Promise.all(fleet.map((g) => g.stop()));
    for (const g of fleet) expect(g.proc!.exitCode).toBe(0);

    const answered = [...load, ...byKey, ...byAcct].filter((o) => o.whole).map((o) => o.id!);
    const rows = await db.query<{ id: string; n: number }>(
      "select request_id::text as id, count(*)::int as n from ledger_entries where kind = 'charge' group by request_id",
    );
    const charges = new Map(rows.map((r) => [r.id, r.n]));
    expect(answered.filter((id) => !charges.has(id))).toEqual([]);
    expect([...charges.values()].every((n) => n === 1)).toBe(true);
    // Nothing but the answered calls and the dropped streams was charged.
    const dropped = new Set(load.filter((o) => !o.whole).map((o) => o.id!));
    expect([...charges.keys()].filter((id) => !answered.includes(id) && !dropped.has(id))).toEqual([]);
    const books = await checkBooks(db, users);
    expect(books.violations).toEqual([]);
    expect(books.openHolds).toBe(0);
    console.log(
      `[fleet] ${INSTANCES} instances: ${answered.length} answered calls (${dropped.size} streams dropped), ${charges.size} charges, ${books.chargesKrw} KRW charged; key limit ${KEY_RPM} and account limit ${ACCOUNT_RPM} served exactly`,
    );
  } finally {
    await Promise.all(fleet.map((g) => g.stop()));
    await sim.stop();
    await db.close();
    await fresh.drop();
    for (const g of fleet) g.cleanup();
  }
}, 120_000);
