/**
 * Chaos: two gateway processes (`bun src/main.ts`) on one fresh PostgreSQL database, one of
 * them behind a TCP proxy, a separate simulator process, and for CHAOS_SECONDS (default 20)
 * concurrent chat calls (streaming and not) and video jobs from many keys, with injected
 * upstream failures, latency and mid-stream drops, random client aborts, one SIGKILL and
 * restart of a gateway, and one cut and restore of the other's database connection. Then the
 * sweepers run and every invariant of the books is checked with SQL; the totals are printed.
 *
 * A SIGKILL leaves that process's open holds behind until the hold sweeper releases them
 * (HOLD_TTL_SECONDS, at least 30 s): rather than wait, the test moves the expiry of the chat
 * holds still open once all traffic has ended (they can only be orphans then) and runs the
 * sweeper. Video jobs still processing are made due at once, so the pollers finish them.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { freshPostgres, postgresAvailable } from "../harness";
import { openDatabase, type Database } from "../../src/db/client";
import { runMigrations } from "../../src/db/migrate";
import { SqlLedger } from "../../src/db/repos/ledger";
import { UserRepo } from "../../src/db/repos/users";
import { signJwt } from "../../src/lib/jwt";
import { TEST_JWT_SECRET } from "../support/http";
import { checkBooks } from "../support/books";
import { call, GatewayProcess, SimProcess } from "../support/procs";
import { TcpProxy } from "../support/tcp-proxy";
import { ADMIN_TOKEN } from "../harness";

const pg = await postgresAvailable();
const SECONDS = Number(process.env.CHAOS_SECONDS ?? 20);
const CONCURRENCY = Number(process.env.CHAOS_CONCURRENCY ?? 16);
const USERS = 6;
const SEED = Number(process.env.CHAOS_SEED ?? Date.now() % 1_000_000);

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

const GATEWAY_ENV = {
  HOLD_TTL_SECONDS: "30",
  DB_QUERY_TIMEOUT_MS: "2000",
  UPSTREAM_FIRST_BYTE_TIMEOUT_MS: "5000",
  UPSTREAM_IDLE_TIMEOUT_MS: "5000",
  VIDEO_POLL_WORKERS: "1",
  VIDEO_POLL_INITIAL_MS: "200",
  VIDEO_POLL_MAX_MS: "500",
  VIDEO_CLAIM_MS: "2000",
  VIDEO_JOB_TIMEOUT_SECONDS: "60",
  STATS_ROLLUP_INTERVAL_MS: "0",
};

describe.skipIf(!pg)("chaos", () => {
  let fresh: { url: string; drop: () => Promise<void> };
  let db: Database;
  let proxy: TcpProxy;
  let sim: SimProcess;
  let a: GatewayProcess; // through the proxy: its database connection is cut
  let b: GatewayProcess; // direct: SIGKILLed and restarted

  beforeAll(async () => {
    fresh = await freshPostgres();
    db = await openDatabase({ url: fresh.url, max: 4 });
    await runMigrations(db);
    const u = new URL(fresh.url);
    proxy = new TcpProxy(u.hostname, Number(u.port || 5432)).start();
    const viaProxy = new URL(fresh.url);
    viaProxy.port = String(proxy.port);
    sim = await new SimProcess().start();
    a = await new GatewayProcess({ ...GATEWAY_ENV, ...sim.providerEnv(), DATABASE_URL: viaProxy.toString() }).start();
    b = await new GatewayProcess({ ...GATEWAY_ENV, ...sim.providerEnv(), DATABASE_URL: fresh.url }).start();
  }, 90_000);

  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    await sim?.stop();
    proxy?.stop();
    await db?.close();
    await fresh?.drop();
    a?.cleanup();
    b?.cleanup();
  }, 60_000);

  test(
    `money and jobs survive faults (${SECONDS} s, seed ${SEED})`,
    async () => {
      const rand = rng(SEED);
      const pick = <T>(xs: readonly T[]) => xs[Math.floor(rand() * xs.length)]!;

      // Tenants: accounts straight in the database, top-ups and keys through the API.
      const hash = await Bun.password.hash("correct horse battery", { algorithm: "argon2id" });
      const users = new UserRepo(db);
      const tenants: { id: string; keys: string[] }[] = [];
      for (let i = 0; i < USERS; i++) {
        const row = (await users.create({
          email: `chaos${i}-${crypto.randomUUID().slice(0, 8)}@test.example`,
          passwordHash: hash,
          industry: "general",
          regulated: false,
        }))!;
        const jwt = signJwt({ sub: row.id, typ: "access" }, TEST_JWT_SECRET, 3600);
        expect(
          (
            await call(a.url, "POST", `/v1/admin/users/${row.id}/topups`, {
              token: ADMIN_TOKEN,
              body: { amount_krw: 30000 * Math.max(1, Math.ceil(SECONDS / 20)) },
            })
          ).status,
        ).toBe(201);
        const keys: string[] = [];
        for (let k = 0; k < 2; k++)
          keys.push((await call(a.url, "POST", "/v1/keys", { token: jwt, body: { name: `k${k}` } })).body.key);
        tenants.push({ id: row.id, keys });
      }

      const counts: Record<string, number> = {};
      const count = (k: string) => (counts[k] = (counts[k] ?? 0) + 1);
      const fiveHundreds: string[] = [];
      const accepted: { id: string; key: string }[] = [];
      const models = ["gpt-4o-mini", "claude-haiku-4-5", "gemini-3.5-flash", "deepseek-v4-flash"];
      const chatFaults = [
        "",
        "",
        "",
        "[sim:fail=503x1]",
        "[sim:fail=503]",
        "[sim:fail=429x1]",
        "[sim:latency=400]",
        "[sim:fail=400]",
      ];
      const streamFaults = [
        "",
        "",
        "[sim:drop=2]",
        "[sim:drop=0]",
        "[sim:chunk_ms=40]",
        "[sim:fail=503x1]",
        "[sim:latency=300]",
      ];
      const videoFaults = ["[sim:video_ms=1500]", "[sim:video_ms=800]", "[sim:video_fail]", "[sim:video_ms=3000]"];

      let stop = false;
      const gateways = () => [a, b];
      async function one(): Promise<void> {
        const t = pick(tenants);
        const key = pick(t.keys);
        const gw = pick(gateways());
        const r = rand();
        const nonce = crypto.randomUUID();
        const abort = new AbortController();
        const abortAfter = rand() < 0.15 ? 50 + Math.floor(rand() * 600) : 0;
        const timer = abortAfter ? setTimeout(() => abort.abort(), abortAfter) : null;
        let kind = "";
        try {
          if (r < 0.5) {
            kind = "chat";
            const res = await call(gw.url, "POST", "/v1/chat/completions", {
              token: key,
              signal: abort.signal,
              body: {
                model: pick(models),
                messages: [{ role: "user", content: `hello ${nonce} ${pick(chatFaults)}` }],
                max_tokens: 40,
              },
            });
            count(`chat ${res.status}`);
            if (res.status >= 500 && res.status !== 502 && res.status !== 503)
              fiveHundreds.push(`${kind} ${res.status} ${JSON.stringify(res.body).slice(0, 200)}`);
          } else if (r < 0.88) {
            kind = "stream";
            const res = await fetch(gw.url + "/v1/chat/completions", {
              method: "POST",
              signal: abort.signal,
              headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
              body: JSON.stringify({
                model: pick(models),
                stream: true,
                messages: [{ role: "user", content: `stream ${nonce} ${pick(streamFaults)}` }],
                max_tokens: 60,
              }),
            });
            const text = await res.text();
            const ended = text.includes("data: [DONE]");
            count(
              `stream ${res.status}${res.status === 200 ? (ended ? (text.includes('"upstream_error"') ? " upstream_error" : " done") : " cut") : ""}`,
            );
            if (res.status >= 500 && res.status !== 502 && res.status !== 503)
              fiveHundreds.push(`${kind} ${res.status} ${text.slice(0, 200)}`);
          } else {
            kind = "video";
            const res = await call(gw.url, "POST", "/v1/video/generations", {
              token: key,
              signal: abort.signal,
              body: {
                model: pick(["veo-3", "kling-v3", "seedance-2-0"]),
                prompt: `a kite ${nonce} ${pick(videoFaults)}`,
                duration_seconds: 5,
              },
            });
            count(`video ${res.status}`);
            if (res.status === 202) accepted.push({ id: res.body.job_id, key });
            if (res.status >= 500 && res.status !== 502 && res.status !== 503)
              fiveHundreds.push(`${kind} ${res.status} ${JSON.stringify(res.body).slice(0, 200)}`);
          }
        } catch (e) {
          const name = (e as Error).name;
          count(
            `${kind} ${abort.signal.aborted ? "client abort" : name === "TypeError" || /connect|socket|closed/i.test(String(e)) ? "connection error" : `error ${name}`}`,
          );
        } finally {
          if (timer) clearTimeout(timer);
        }
      }
      const workers = Array.from({ length: CONCURRENCY }, async () => {
        while (!stop) await one();
      });

      const t0 = performance.now();
      const events: string[] = [];
      const at = (frac: number) => Bun.sleep(Math.max(0, t0 + SECONDS * 1000 * frac - performance.now()));
      const faults = (async () => {
        await at(0.25);
        b.kill("SIGKILL");
        events.push(`${((performance.now() - t0) / 1000).toFixed(1)} s: SIGKILL gateway B`);
        await b.exited();
        await Bun.sleep(500);
        await b.start();
        events.push(`${((performance.now() - t0) / 1000).toFixed(1)} s: gateway B restarted`);
        await at(0.55);
        proxy.cut("refuse");
        events.push(`${((performance.now() - t0) / 1000).toFixed(1)} s: database connection of gateway A cut`);
        await Bun.sleep(Math.min(4000, SECONDS * 100 + 1000));
        proxy.restore();
        events.push(`${((performance.now() - t0) / 1000).toFixed(1)} s: restored`);
      })();
      await at(1);
      stop = true;
      await Promise.all(workers);
      await faults;
      const requests = Object.values(counts).reduce((x, y) => x + y, 0);

      // Both gateways serve again.
      expect((await call(a.url, "GET", "/readyz")).status).toBe(200);
      expect((await call(b.url, "GET", "/readyz")).status).toBe(200);

      // Video: make every processing job due now and let the pollers finish them.
      await db.query("update video_jobs set next_poll_at = now() where status = 'processing'");
      const deadline = performance.now() + 30_000;
      while (performance.now() < deadline) {
        const [r] = await db.query<{ n: number }>(
          "select count(*)::int as n from video_jobs where status = 'processing'",
        );
        if (r!.n === 0) break;
        await db.query(
          "update video_jobs set next_poll_at = now() where status = 'processing' and next_poll_at > now() + interval '1 second'",
        );
        await Bun.sleep(250);
      }

      // Chat holds still open now are orphans (no request is in flight): expire them and sweep.
      const orphans = await db.query<{ id: string }>(
        "update holds set expires_at = now() - interval '1 second' where status = 'open' and id not in (select id from video_jobs) returning id",
      );
      const swept = await new SqlLedger(db).sweepExpired(10_000);

      const books = await checkBooks(
        db,
        tenants.map((t) => t.id),
        accepted.map((j) => j.id),
      );
      // Every accepted job is visible to its key, final.
      let finalSeen = 0;
      for (const j of accepted) {
        const r = await call(pick([a, b]).url, "GET", `/v1/jobs/${j.id}`, { token: j.key });
        if (r.status === 200 && r.body.status !== "processing") finalSeen++;
      }

      console.log(
        [
          `[chaos] seed ${SEED}, ${SECONDS} s, ${CONCURRENCY} workers, ${requests} requests`,
          ...events.map((e) => `  ${e}`),
          `  outcomes: ${JSON.stringify(Object.fromEntries(Object.entries(counts).sort()))}`,
          `  video jobs accepted ${accepted.length}, final ${JSON.stringify(books.videoJobs)}, seen final through the API ${finalSeen}`,
          `  orphaned chat holds swept ${swept} (of ${orphans.length} expired); holds settled ${books.settledHolds}, released ${books.releasedHolds}, open ${books.openHolds}`,
          `  top-ups ${books.topupsKrw} KRW, charges ${books.chargesKrw.toFixed(6)} KRW, usage-event costs ${books.usageCostKrw.toFixed(6)} KRW, usage events ${books.usageEvents}`,
          `  violations: ${books.violations.length ? books.violations.join("; ") : "none"}`,
        ].join("\n"),
      );
      if (fiveHundreds.length) console.log(fiveHundreds.slice(0, 5));
      expect(fiveHundreds).toEqual([]);
      expect(books.violations).toEqual([]);
      expect(books.openHolds).toBe(0);
      expect(finalSeen).toBe(accepted.length);
      expect(books.chargesKrw).toBeCloseTo(books.usageCostKrw, 9);
      // The run did exercise what it claims to.
      expect(accepted.length).toBeGreaterThan(0);
      expect(Object.keys(counts).some((k) => k.startsWith("chat 200"))).toBe(true);
      expect(Object.keys(counts).some((k) => k.startsWith("stream 200"))).toBe(true);
      expect(b.starts).toBe(2);
      // Both processes logged no unhandled error.
      for (const g of [a, b])
        expect((await g.log()).split("\n").filter((l) => l.includes('"unhandled error"'))).toEqual([]);
    },
    (SECONDS + 120) * 1000,
  );
});
