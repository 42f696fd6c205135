/**
 * `kill -9` in the middle of a busy key's traffic: every call whose answer a client received
 * whole (a JSON 200, or a stream that reached `[DONE]`) is charged in the database, once.
 * With `LEDGER_SETTLE=behind_answer` the settle runs after the answer left and a kill between
 * the two leaves that call free; the default makes the answer's last bytes wait for it.
 */
import { expect, test } from "bun:test";
import { freshPostgres, postgresAvailable } from "../harness";
import { openDatabase } from "../../src/db/client";
import { runMigrations } from "../../src/db/migrate";
import { SqlLedger } from "../../src/db/repos/ledger";
import { call, GatewayProcess, SimProcess } from "../support/procs";
import { fundedAccount } from "../support/accounts";

const CLIENTS = 16;
const RUN_MS = 2500;

/** One streamed call; its request id when the client read the stream to `[DONE]`. */
async function streamed(base: string, key: string): Promise<string | null> {
  const res = await fetch(`${base}/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify({
      model: "gpt-4o-mini",
      messages: [{ role: "user", content: "hi" }],
      max_tokens: 20,
      stream: true,
    }),
  });
  if (res.status !== 200) return null;
  const text = await res.text();
  return text.trimEnd().endsWith("data: [DONE]") ? res.headers.get("x-request-id") : null;
}

// Credit leases too: a leased call's charge lands (in its batch) before its answer leaves.
for (const leases of ["off", "on"])
  test(`kill -9 under load, leases ${leases}: every answered call is charged exactly once (PostgreSQL)`, async () => {
    if (!(await postgresAvailable())) return;
    const fresh = await freshPostgres();
    const db = await openDatabase({ url: fresh.url, max: 4 });
    await runMigrations(db);
    const sim = await new SimProcess().start();
    const gw = await new GatewayProcess({
      ...sim.providerEnv(),
      DATABASE_URL: fresh.url,
      LEDGER_LEASES: leases,
      RATE_LIMIT_RPM: "0",
      STATS_ROLLUP_INTERVAL_MS: "0",
      VIDEO_POLL_WORKERS: "0",
    }).start();
    try {
      const hash = await Bun.password.hash("correct horse battery", { algorithm: "argon2id" });
      const user = await fundedAccount(db, gw.url, { prefix: "k9", krw: 100_000, keyName: "k9", passwordHash: hash });
      const key = user.keys[0]!;

      const answered: string[] = [];
      let stop = false;
      const clients = Array.from({ length: CLIENTS }, async (_, i) => {
        while (!stop) {
          try {
            if (i % 4 === 0) {
              const id = await streamed(gw.url, key);
              if (id) answered.push(id);
            } else {
              const r = await call(gw.url, "POST", "/v1/chat/completions", {
                token: key,
                body: { model: "gpt-4o-mini", messages: [{ role: "user", content: "hi" }], max_tokens: 20 },
              });
              if (r.status === 200) answered.push(r.headers.get("x-request-id")!);
            }
          } catch {
            return; // the process is gone
          }
        }
      });
      await Bun.sleep(RUN_MS);
      gw.kill("SIGKILL");
      stop = true;
      await Promise.all(clients);
      await gw.exited();

      // What the dead process left open is released as the sweeper would after HOLD_TTL_SECONDS.
      await db.query("update holds set expires_at = now() - interval '1 second' where status = 'open'");
      await new SqlLedger(db).sweepExpired(10_000);
      const rows = await db.query<{ id: string; n: number }>(
        "select request_id::text as id, count(*)::int as n from ledger_entries where user_id = $1 and kind = 'charge' group by request_id",
        [user.id],
      );
      const charges = new Map(rows.map((r) => [r.id, r.n]));
      const leased = await db.query<{ n: number }>(
        "select count(*)::int as n from ledger_entries where user_id = $1 and kind = 'charge' and meta ? 'lease'",
        [user.id],
      );
      // With leases on, the key was busy enough to take one: the test exercises the leased path.
      expect(leased[0]!.n > 0).toBe(leases === "on");
      expect(answered.length).toBeGreaterThan(100);
      expect(answered.filter((id) => !charges.has(id))).toEqual([]);
      expect([...charges.values()].every((n) => n === 1)).toBe(true);
    } finally {
      gw.kill("SIGKILL");
      await sim.stop();
      await db.close();
      await fresh.drop();
      gw.cleanup();
    }
  }, 120_000);
