/**
 * Issue 28, #2: an 8 KB embeddings request (2,048 one-character inputs, 3,072 dimensions)
 * answers about 80 MB of floats. On a real gateway process (PostgreSQL) in front of a dense,
 * OpenAI-like upstream (dense-upstream.ts): eight such calls at once must not grow the
 * process by their answers (the gateway streams them through a spool instead of parsing and
 * re-serialising them), each answer is exactly the bytes the old whole-answer encoding gave
 * and what the openai SDK decodes from the upstream itself (both encodings), the cost is the
 * same 2,048 tokens at the catalog price, charged once each, and the upstream is asked for the
 * client's encoding. A call whose inputs × dimensions pass EMBEDDINGS_MAX_VALUES is refused
 * 400 before any hold.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import OpenAI from "openai";
import { ADMIN_TOKEN, freshPostgres, postgresAvailable } from "../harness";
import { openDatabase, type Database } from "../../src/db/client";
import { runMigrations } from "../../src/db/migrate";
import { UserRepo } from "../../src/db/repos/users";
import { signJwt } from "../../src/lib/jwt";
import { TEST_JWT_SECRET } from "../support/http";
import { rssMiB } from "../../bench/lib/procs";
import { checkBooks } from "../support/books";
import { call, GatewayProcess } from "../support/procs";
import { DenseUpstream, denseValues } from "./dense-upstream";

const pg = await postgresAvailable();
const MODEL = "text-embedding-3-large";
const DIMS = 3072;
const INPUT = Array.from({ length: 2048 }, (_, i) => String.fromCharCode(0x61 + (i % 26)));
/** 2,048 tokens at text-embedding-3-large's $0.13 per million, 1,400 KRW/USD, rounded up: 0.372736 KRW. */
const COST_MICRO = (2048n * 130_000n * 1_400_000n + 999_999_999n) / 1_000_000_000n;

describe.skipIf(!pg)("embeddings answers do not amplify (a real process, a dense upstream)", () => {
  let fresh: { url: string; drop: () => Promise<void> };
  let db: Database;
  let up: DenseUpstream;
  let g: GatewayProcess;
  let user: { id: string; key: string };

  beforeAll(async () => {
    fresh = await freshPostgres();
    db = await openDatabase({ url: fresh.url, max: 2 });
    await runMigrations(db);
    up = new DenseUpstream().start();
    g = await new GatewayProcess({
      DATABASE_URL: fresh.url,
      OPENAI_BASE_URL: up.url,
      OPENAI_API_KEY: "dense",
      VIDEO_POLL_WORKERS: "0",
      STATS_ROLLUP_INTERVAL_MS: "0",
    }).start();
    const row = (await new UserRepo(db).create({
      email: `amp-${crypto.randomUUID().slice(0, 8)}@test.example`,
      passwordHash: "x",
      industry: "general",
      regulated: false,
    }))!;
    const jwt = signJwt({ sub: row.id, typ: "access" }, TEST_JWT_SECRET, 3600);
    const top = await call(g.url, "POST", `/v1/admin/users/${row.id}/topups`, {
      token: ADMIN_TOKEN,
      body: { amount_krw: 1000 },
    });
    expect(top.status).toBe(201);
    user = { id: row.id, key: (await call(g.url, "POST", "/v1/keys", { token: jwt, body: {} })).body.key };
  }, 60_000);

  afterAll(async () => {
    await g?.stop();
    up?.stop();
    await db?.close();
    await fresh?.drop();
    g?.cleanup();
  });

  /** One call read as a stream: its status, length and hash, never the whole body. */
  async function rawCall(encoding: "float" | "base64") {
    const r = await fetch(g.url + "/v1/embeddings", {
      method: "POST",
      headers: { authorization: `Bearer ${user.key}`, "content-type": "application/json" },
      body: JSON.stringify({ model: MODEL, input: INPUT, dimensions: DIMS, encoding_format: encoding }),
    });
    const hash = createHash("sha256");
    let bytes = 0;
    for await (const chunk of r.body!) {
      hash.update(chunk);
      bytes += chunk.length;
    }
    return { status: r.status, bytes, sha: hash.digest("hex") };
  }

  const shas = new Map<string, string>();
  /** What the gateway answered before streaming (the whole list, JSON.stringify'd), as a hash. */
  function expectedSha(encoding: "float" | "base64"): string {
    if (!shas.has(encoding)) shas.set(encoding, computeSha(encoding));
    return shas.get(encoding)!;
  }
  function computeSha(encoding: "float" | "base64"): string {
    const vec = (i: number) => {
      const v = denseValues(i % 64, DIMS);
      if (encoding === "float") return v;
      const f = Float32Array.from(v);
      return Buffer.from(f.buffer).toString("base64");
    };
    const hash = createHash("sha256");
    hash.update('{"object":"list","data":[');
    INPUT.forEach((_, i) =>
      hash.update(`${i ? "," : ""}${JSON.stringify({ object: "embedding", index: i, embedding: vec(i) })}`),
    );
    hash.update(`],"model":"${MODEL}","usage":{"prompt_tokens":2048,"total_tokens":2048}}`);
    return hash.digest("hex");
  }

  test("2,048 × 3,072: the openai SDK decodes the upstream's own vectors in both encodings, the bytes are the old encoding's", async () => {
    const sdk = new OpenAI({ apiKey: user.key, baseURL: g.url + "/v1", maxRetries: 0, timeout: 120_000 });
    const seen: string[] = [];
    for (const encoding of ["base64", "float"] as const) {
      // The SDK asks base64 by default and decodes it; asked for floats, it parses them.
      const r = await sdk.embeddings.create({
        model: MODEL,
        input: INPUT,
        dimensions: DIMS,
        ...(encoding === "float" && { encoding_format: "float" as const }),
      });
      expect(r.data).toHaveLength(2048);
      expect(r.usage).toEqual({ prompt_tokens: 2048, total_tokens: 2048 });
      for (const [i, d] of r.data.entries()) {
        expect(d.index).toBe(i);
        const want = denseValues(i % 64, DIMS);
        // Floats: the upstream's own numbers; base64: their float32 values, as OpenAI's base64 carries them.
        const got = d.embedding as number[];
        if (encoding === "float") {
          if (got.some((x, j) => x !== want[j])) throw new Error(`float vector ${i} differs`);
        } else if (got.some((x, j) => x !== Math.fround(want[j]!))) throw new Error(`base64 vector ${i} differs`);
      }
      seen.push(encoding);
      // The upstream was asked for the client's encoding (base64 passes through, never decoded).
      expect(up.asked.at(-1)).toBe(encoding);
      const raw = await rawCall(encoding);
      expect(raw).toMatchObject({ status: 200, sha: expectedSha(encoding) });
    }
    expect(seen).toEqual(["base64", "float"]);
  }, 180_000);

  test("eight at once: the process does not grow by the answers; each charged 2,048 tokens once; the books balance", async () => {
    const pid = g.proc!.pid;
    // Warm-up: one call of each encoding, so the baseline includes what any call allocates.
    expect((await rawCall("base64")).status).toBe(200);
    expect((await rawCall("float")).status).toBe(200);
    await Bun.sleep(500);
    const charges = async () =>
      (
        await db.query<{ n: number }>(
          "select count(*)::int as n from ledger_entries where user_id = $1 and kind = 'charge'",
          [user.id],
        )
      )[0]!.n;
    const n0 = await charges();
    const base = rssMiB(pid)!;
    let peak = base;
    const sampler = setInterval(() => (peak = Math.max(peak, rssMiB(pid) ?? 0)), 10);
    const calls0 = up.calls;
    const results = await Promise.all(Array.from({ length: 8 }, () => rawCall("float")));
    clearInterval(sampler);
    const floatBytes = results[0]!.bytes;
    console.log(
      `[amplification] eight float answers of ${(floatBytes / 2 ** 20).toFixed(1)} MiB at once: gateway RSS ${base} → peak ${peak} MiB (+${(peak - base).toFixed(0)} MiB)`,
    );
    for (const r of results) expect(r).toMatchObject({ status: 200, sha: expectedSha("float") });
    expect(up.calls - calls0).toBe(8);
    // The answers are ~78 MB each (624 MB together). Parsed and re-serialised whole, eight took
    // the process up by 1,243 MiB (measured before the change; 85-109 MiB after). A generous bound.
    expect(floatBytes).toBeGreaterThan(70 * 2 ** 20);
    expect(peak - base).toBeLessThan(256);

    // Money: each of the eight charged once, exactly 2,048 tokens at the catalog price, as every call before.
    await Bun.sleep(1000);
    const books = await checkBooks(db, [user.id]);
    expect(books.violations).toEqual([]);
    expect((await charges()) - n0).toBe(8);
    const rows = await db.query<{ n: number; each: string }>(
      `select count(*)::int as n, min(-amount_micro)::text as each from ledger_entries where user_id = $1 and kind = 'charge'
        having min(amount_micro) = max(amount_micro)`,
      [user.id],
    );
    expect(rows).toEqual([{ n: n0 + 8, each: String(COST_MICRO) }]);
    const events = await db.query<{ n: number }>(
      "select count(*)::int as n from usage_events where user_id = $1 and prompt_tokens = 2048 and cost_micro = $2 and status = 200",
      [user.id, String(COST_MICRO)],
    );
    expect(events).toEqual([{ n: n0 + 8 }]);
  }, 300_000);

  test("past EMBEDDINGS_MAX_VALUES: 400 before any hold, no upstream call, no money", async () => {
    const lowered = await new GatewayProcess({
      DATABASE_URL: fresh.url,
      OPENAI_BASE_URL: up.url,
      OPENAI_API_KEY: "dense",
      VIDEO_POLL_WORKERS: "0",
      STATS_ROLLUP_INTERVAL_MS: "0",
      EMBEDDINGS_MAX_VALUES: "100000",
    }).start();
    try {
      const calls0 = up.calls;
      const [before] = await db.query<{ n: number }>("select count(*)::int as n from holds where user_id = $1", [
        user.id,
      ]);
      const r = await call(lowered.url, "POST", "/v1/embeddings", {
        token: user.key,
        body: { model: MODEL, input: INPUT.slice(0, 33), dimensions: DIMS },
      });
      expect(r.status).toBe(400);
      expect(r.body.error).toMatchObject({ code: "unsupported_parameter", param: "input" });
      const ok = await call(lowered.url, "POST", "/v1/embeddings", {
        token: user.key,
        body: { model: MODEL, input: INPUT.slice(0, 32), dimensions: DIMS },
      });
      expect(ok.status).toBe(200);
      expect(up.calls - calls0).toBe(1);
      const [after] = await db.query<{ n: number }>("select count(*)::int as n from holds where user_id = $1", [
        user.id,
      ]);
      expect(after!.n - before!.n).toBe(1);
    } finally {
      await lowered.stop();
      lowered.cleanup();
    }
  }, 120_000);
});
