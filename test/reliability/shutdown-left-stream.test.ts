/**
 * A stream whose client hung up is still read for its usage (STREAM_DRAIN_MS) and billed when
 * that read ends. A SIGTERM in that window must wait for it, or cut it, before the process lets
 * go of the database: otherwise the call's hold stays open until it expires, with nobody to
 * settle it.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { freshPostgres, postgresAvailable } from "../harness";
import { openDatabase, type Database } from "../../src/db/client";
import { runMigrations } from "../../src/db/migrate";
import { GatewayProcess, SimProcess } from "../support/procs";
import { fundedAccount } from "../support/accounts";

const pg = await postgresAvailable();

describe.skipIf(!pg)("shutdown with a stream its client left", () => {
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

  test("the left stream is billed (or its hold released) before the process exits", async () => {
    const row = await fundedAccount(db, g.url, { prefix: "sl", krw: 10_000 });
    const client = new AbortController();
    const res = await fetch(g.url + "/v1/chat/completions", {
      method: "POST",
      headers: { authorization: `Bearer ${row.keys[0]!}`, "content-type": "application/json" },
      body: JSON.stringify({
        model: "gpt-4o-mini",
        stream: true,
        max_tokens: 100,
        messages: [{ role: "user", content: "slow stream [sim:tokens=30] [sim:chunk_ms=100]" }],
      }),
      signal: client.signal,
    });
    expect(res.status).toBe(200);
    const id = res.headers.get("x-request-id")!;
    const reader = res.body!.getReader();
    await reader.read(); // the first bytes, then the client hangs up
    client.abort();
    await Bun.sleep(50);
    g.kill("SIGTERM");
    const code = await g.exited();
    expect(code).toBe(0);

    const [hold] = await db.query<{ status: string }>("select status from holds where id = $1", [id]);
    expect(hold?.status).not.toBe("open");
    const [open] = await db.query<{ n: number }>(
      "select count(*)::int as n from holds where status = 'open' and user_id = $1",
      [row.id],
    );
    expect(open!.n).toBe(0);
    const [held] = await db.query<{ held: string }>("select held_micro::text as held from users where id = $1", [
      row.id,
    ]);
    expect(held!.held).toBe("0");
  }, 60_000);
});
