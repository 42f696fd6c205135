/**
 * Issue 28, #2, measured: a gateway process (PostgreSQL) in front of a dense OpenAI-like
 * upstream (test/embeddings/dense-upstream.ts, or PROBE_UP=<url> for one in its own process);
 * for each `encoding:count` of the argument (default float:1,base64:1,float:8,base64:8), that
 * many 2,048 × 3,072 calls at once: the gateway's RSS before and at its peak, and another
 * tenant's small embeddings calls (one after the other, 50 ms apart) while they run.
 * `bun bench/embeddings-amplification.ts float:8,base64:8`; figures in docs/reliability.md.
 */
import { ADMIN_TOKEN, freshPostgres } from "../test/harness";
import { openDatabase } from "../src/db/client";
import { runMigrations } from "../src/db/migrate";
import { UserRepo } from "../src/db/repos/users";
import { signJwt } from "../src/lib/jwt";
import { TEST_JWT_SECRET } from "../test/support/http";
import { rssMiB } from "./lib/procs";
import { call, GatewayProcess } from "../test/support/procs";
import { DenseUpstream } from "../test/embeddings/dense-upstream";
const INPUT = Array.from({ length: 2048 }, (_, i) => String.fromCharCode(0x61 + (i % 26)));
const fresh = await freshPostgres();
const db = await openDatabase({ url: fresh.url, max: 2 });
await runMigrations(db);
const up = new DenseUpstream().start();
const g = await new GatewayProcess({
  DATABASE_URL: fresh.url,
  OPENAI_BASE_URL: process.env.PROBE_UP ?? up.url,
  OPENAI_API_KEY: "d",
  VIDEO_POLL_WORKERS: "0",
  STATS_ROLLUP_INTERVAL_MS: "0",
}).start();
const row = (await new UserRepo(db).create({
  email: `p-${crypto.randomUUID().slice(0, 8)}@t.example`,
  passwordHash: "x",
  industry: "general",
  regulated: false,
}))!;
const jwt = signJwt({ sub: row.id, typ: "access" }, TEST_JWT_SECRET, 3600);
await call(g.url, "POST", `/v1/admin/users/${row.id}/topups`, { token: ADMIN_TOKEN, body: { amount_krw: 1000 } });
const key = (await call(g.url, "POST", "/v1/keys", { token: jwt, body: {} })).body.key;
const row2 = (await new UserRepo(db).create({
  email: `p-${crypto.randomUUID().slice(0, 8)}@t.example`,
  passwordHash: "x",
  industry: "general",
  regulated: false,
}))!;
await call(g.url, "POST", `/v1/admin/users/${row2.id}/topups`, { token: ADMIN_TOKEN, body: { amount_krw: 1000 } });
const key2 = (
  await call(g.url, "POST", "/v1/keys", {
    token: signJwt({ sub: row2.id, typ: "access" }, TEST_JWT_SECRET, 3600),
    body: {},
  })
).body.key;
async function one(enc: string) {
  const r = await fetch(g.url + "/v1/embeddings", {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify({ model: "text-embedding-3-large", input: INPUT, dimensions: 3072, encoding_format: enc }),
  });
  let n = 0;
  for await (const c of r.body!) n += c.length;
  return n;
}
const pid = g.proc!.pid;
for (const [enc, k] of (process.argv[2] ?? "float:1,base64:1,float:8,base64:8").split(",").map((x) => x.split(":"))) {
  await Bun.sleep(300);
  const base = rssMiB(pid)!;
  let peak = base;
  const s = setInterval(() => (peak = Math.max(peak, rssMiB(pid) ?? 0)), 10);
  const t0 = performance.now();
  const all = Promise.all(Array.from({ length: Number(k) }, () => one(enc!)));
  let done = false;
  void all.then(() => (done = true));
  const lat: number[] = [];
  while (!done) {
    const t1 = performance.now();
    const small = await fetch(g.url + "/v1/embeddings", {
      method: "POST",
      headers: { authorization: `Bearer ${key2}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "text-embedding-3-small", input: "other tenant", dimensions: 8 }),
    });
    await small.text();
    lat.push(Math.round(performance.now() - t1));
    await Bun.sleep(50);
  }
  lat.sort((a, b) => a - b);
  console.log(
    `  another tenant's small calls meanwhile: ${lat.length}, median ${lat[lat.length >> 1]} ms, max ${lat.at(-1)} ms`,
  );
  const sizes = await all;
  clearInterval(s);
  console.log(
    `${k} × ${enc}: ${(sizes[0]! / 2 ** 20).toFixed(1)} MiB each, RSS ${base} → ${peak} (+${(peak - base).toFixed(0)}) in ${Math.round(performance.now() - t0)} ms`,
  );
}
await g.stop();
up.stop();
await db.close();
await fresh.drop();
g.cleanup();
