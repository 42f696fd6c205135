/**
 * The clean shutdown past its drain time (src/boot/shutdown.ts): a real gateway process with
 * SHUTDOWN_DRAIN_MS=5000 gets SIGTERM while streams of every dialect (chat completions,
 * Responses, Messages; relayed and translated), a JSON call longer than the drain time and a
 * short one are running. New connections are refused; the short call finishes; every stream
 * still open ends with its dialect's error event; the long JSON call is answered 503; the
 * process exits 0 within the drain limit; and the books in PostgreSQL show each call settled
 * (or released) exactly once, no hold open, each with its request log line.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { freshPostgres, postgresAvailable } from "../harness";
import { openDatabase, type Database } from "../../src/db/client";
import { runMigrations } from "../../src/db/migrate";
import { checkBooks } from "../support/books";
import { GatewayProcess, SimProcess } from "../support/procs";
import { fundedAccount } from "../support/accounts";
import { connect, type Socket } from "node:net";

/** A kept-alive HTTP/1.1 connection: each `get` sends a request and resolves with what came back (or "closed"). */
async function keptAlive(port: number): Promise<{ get(path: string): Promise<string>; socket: Socket }> {
  const socket = connect(port, "127.0.0.1");
  await new Promise<void>((r) => socket.once("connect", () => r()));
  let buf = "";
  let waiter: ((s: string) => void) | null = null;
  socket.on("data", (d) => {
    buf += d.toString();
    if (waiter && /\r\n\r\n/.test(buf)) setTimeout(() => (waiter?.(buf), (waiter = null)), 50);
  });
  socket.on("close", () => waiter?.(buf || "closed"));
  socket.on("error", () => {});
  return {
    socket,
    get(path) {
      buf = "";
      return new Promise((r) => {
        waiter = r;
        socket.write(`GET ${path} HTTP/1.1\r\nHost: gw\r\n\r\n`, (e) => e && r("closed"));
      });
    },
  };
}

const pg = await postgresAvailable();
const DRAIN_MS = 5000;
// A stream of about 15 s: far past the drain time.
const SLOW = "[sim:tokens=200] [sim:chunk_ms=1000]";

interface Answer {
  name: string;
  status: number;
  id: string | null;
  text: string;
}

describe.skipIf(!pg)("shutdown past the drain time (SIGTERM)", () => {
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
      CATALOG_TODAY: "2026-01-01",
      SHUTDOWN_DRAIN_MS: String(DRAIN_MS),
      STATS_ROLLUP_INTERVAL_MS: "0",
      LOG_LEVEL: "info",
    }).start();
  }, 60_000);

  afterAll(async () => {
    await g?.stop();
    await sim?.stop();
    await db?.close();
    await fresh?.drop();
    g?.cleanup();
  });

  test("open streams end with their dialect's error event, every call settled once, exit within the limit", async () => {
    const row = await fundedAccount(db, g.url, { prefix: "sdd", krw: 10_000 });
    const key = row.keys[0]!;
    const headers = { authorization: `Bearer ${key}`, "content-type": "application/json", "accept-language": "en" };

    const post = (name: string, path: string, body: unknown): Promise<Answer> =>
      fetch(g.url + path, { method: "POST", headers, body: JSON.stringify(body) })
        .then(async (r) => ({
          name,
          status: r.status,
          id: r.headers.get("x-request-id"),
          text: await r.text().catch(() => "(body cut)"),
        }))
        .catch((e) => ({ name, status: 0, id: null, text: `(connection failed: ${e})` }));
    const chat = (model: string, content: string, stream = true) => ({
      model,
      stream,
      max_tokens: 400,
      messages: [{ role: "user", content }],
    });
    const calls = [
      // Relayed (an OpenAI-compatible upstream) and translated (Anthropic upstream) chat streams.
      post("chat relayed", "/v1/chat/completions", chat("gpt-4o-mini", `long ${SLOW}`)),
      post("chat translated", "/v1/chat/completions", chat("claude-haiku-4-5", `long ${SLOW}`)),
      post("responses", "/v1/responses", { model: "gpt-4o-mini", stream: true, input: `long ${SLOW}` }),
      post("responses translated", "/v1/responses", { model: "claude-haiku-4-5", stream: true, input: `long ${SLOW}` }),
      post("messages relayed", "/v1/messages", {
        model: "claude-haiku-4-5",
        stream: true,
        max_tokens: 400,
        messages: [{ role: "user", content: `long ${SLOW}` }],
      }),
      post("messages translated", "/v1/messages", {
        model: "gpt-4o-mini",
        stream: true,
        max_tokens: 400,
        messages: [{ role: "user", content: `long ${SLOW}` }],
      }),
      // A stream that finishes within the drain time, and two JSON calls: one within it, one past it.
      post("chat short", "/v1/chat/completions", chat("gpt-4o-mini", "short [sim:tokens=10] [sim:chunk_ms=50]")),
      post("json short", "/v1/chat/completions", chat("gpt-4o-mini", "short [sim:latency=1000]", false)),
      post("json long", "/v1/chat/completions", chat("gpt-4o-mini", "long [sim:latency=20000]", false)),
    ];
    const alive = await keptAlive(g.port);
    expect(await alive.get("/healthz")).toStartWith("HTTP/1.1 200");
    await Bun.sleep(1500); // every stream has opened and sent some text

    const t0 = performance.now();
    g.kill("SIGTERM");
    // It stops accepting: a new connection is refused soon after the signal.
    let refused = false;
    while (performance.now() - t0 < 1500) {
      try {
        await fetch(g.url + "/healthz", { signal: AbortSignal.timeout(300) });
      } catch {
        refused = true;
        break;
      }
      await Bun.sleep(20);
    }
    expect(refused).toBe(true);
    // A connection kept alive from before gets no new call: a 503 that closes it, or closed already.
    const again = await alive.get("/healthz");
    expect(again === "closed" || (again.startsWith("HTTP/1.1 503") && /connection: close/i.test(again))).toBe(true);
    alive.socket.destroy();

    const code = await g.exited();
    const took = performance.now() - t0;
    const answers = Object.fromEntries((await Promise.all(calls)).map((a) => [a.name, a]));
    // Exit 0: it stopped on its own, ending the 15-second streams early (their error events
    // below), not by being forced; how long it took is logged, never asserted.
    expect(code).toBe(0);

    // What finished within the drain time finished as usual.
    expect(answers["chat short"]!.text).toContain('"finish_reason":"stop"');
    expect(answers["chat short"]!.text).not.toContain('"error"');
    expect(answers["json short"]!.status).toBe(200);
    // The JSON call past the drain time: 503 service_unavailable, retryable.
    const long = answers["json long"]!;
    expect(long.status).toBe(503);
    expect(JSON.parse(long.text).error.code).toBe("service_unavailable");

    // Each open stream ended with its dialect's error event, after some text.
    for (const name of ["chat relayed", "chat translated"]) {
      const a = answers[name]!;
      expect(a.status).toBe(200);
      const err = a.text
        .split("\n\n")
        .map((f) => f.replace(/^data: /, ""))
        .filter((f) => f.startsWith("{") && f.includes('"error"'))
        .map((f) => JSON.parse(f).error);
      expect(err).toHaveLength(1);
      expect(err[0].code).toBe("service_unavailable");
      expect(err[0].message).toContain("shutting down");
      expect(err[0].partial.length).toBeGreaterThan(0);
      expect(a.text.trimEnd().endsWith("data: [DONE]")).toBe(true);
    }
    for (const name of ["responses", "responses translated"]) {
      const a = answers[name]!;
      expect(a.text).toMatch(/event: error\ndata: \{[^\n]*"code":"service_unavailable"/);
      expect(a.text).not.toContain("response.completed");
    }
    for (const name of ["messages relayed", "messages translated"]) {
      const a = answers[name]!;
      expect(a.text).toContain("event: message_start");
      const frame = a.text.split("\n\n").find((f) => f.startsWith("event: error"))!;
      const data = JSON.parse(frame.split("\ndata: ")[1]!);
      expect(data.error.type).toBe("overloaded_error");
      expect(a.text).not.toContain("message_stop");
    }

    // The books: every call closed exactly once, nothing held, the ledger balanced.
    const ids = Object.values(answers).map((a) => a.id!);
    const holds = await db.query<{ id: string; status: string }>(
      "select id, status from holds where id = any($1::uuid[])",
      [ids],
    );
    const statusOf = Object.fromEntries(holds.map((h) => [h.id, h.status]));
    for (const a of Object.values(answers)) {
      // A stream that delivered text is charged that part (one that delivered none is released);
      // the JSON call past the limit is released.
      const want =
        a.name === "json long" ? ["released"] : a.name.startsWith("chat") ? ["settled"] : ["settled", "released"];
      expect(want).toContain(statusOf[a.id!]);
    }
    const events = await db.query<{ request_id: string; status: number; n: number }>(
      "select request_id, status, count(*) over (partition by request_id)::int as n from usage_events where request_id = any($1::uuid[])",
      [ids],
    );
    expect(events).toHaveLength(ids.length);
    expect(events.every((e) => e.n === 1)).toBe(true);
    const byId = Object.fromEntries(events.map((e) => [e.request_id, e.status]));
    expect(byId[answers["chat relayed"]!.id!]).toBe(503);
    expect(byId[answers["json long"]!.id!]).toBe(503);
    expect(byId[answers["chat short"]!.id!]).toBe(200);
    const books = await checkBooks(db, [row.id]);
    expect(books.violations).toEqual([]);
    expect(books.openHolds).toBe(0);

    // One request log line per call, the ended ones saying why.
    const lines = (await g.log())
      .split("\n")
      .filter((l) => l.startsWith("{"))
      .map((l) => JSON.parse(l))
      .filter((l) => l.msg === "request");
    for (const a of Object.values(answers)) expect(lines.filter((l) => l.request_id === a.id)).toHaveLength(1);
    const cut = lines.find((l) => l.request_id === answers["messages relayed"]!.id)!;
    expect(cut).toMatchObject({ stream: "failed", error: "service_unavailable" });
    console.log(
      `[shutdown-drain] exited ${code} ${Math.round(took)} ms after SIGTERM (limit ${DRAIN_MS} ms); 6 streams ended with their error event, 1 JSON call 503, 2 calls finished`,
    );
  }, 60_000);
});
