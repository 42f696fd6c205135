/**
 * Start-up against a wrong or late PostgreSQL, as an operator sees it: real `bun src/main.ts`
 * processes, stderr read line by line.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { freshPostgres, postgresAvailable } from "../harness";
import { freePort } from "../support/procs";
import { TcpProxy } from "../support/tcp-proxy";

const ROOT = resolve(import.meta.dir, "../..");
const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

function env(extra: Record<string, string>): Record<string, string> {
  const dataDir = mkdtempSync(join(tmpdir(), "gw-boot-"));
  dirs.push(dataDir);
  const base: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined) base[k] = v;
  return {
    ...base,
    HOST: "127.0.0.1",
    PORT: String(freePort()),
    DATA_DIR: dataDir,
    LOG_LEVEL: "warn",
    STATS_ROLLUP_INTERVAL_MS: "0",
    VIDEO_POLL_WORKERS: "0",
    ...extra,
  };
}

/** Each line one sentence: ends with a period, no second sentence, no stack frame. */
function expectSentences(stderr: string): string[] {
  const lines = stderr.split("\n").filter((l) => l.trim() !== "");
  expect(lines.length).toBeGreaterThan(0);
  for (const line of lines) {
    expect([line, /^\s+at /.test(line)]).toEqual([line, false]);
    expect([line, line.endsWith(".")]).toEqual([line, true]);
    expect([line, /\.\s+[A-Z]/.test(line)]).toEqual([line, false]);
  }
  return lines;
}

describe("boot against PostgreSQL", () => {
  test("a closed port: retried for DB_CONNECT_TIMEOUT_SECONDS, then a non-zero exit with one sentence per line", async () => {
    const port = freePort();
    const t0 = performance.now();
    const p = Bun.spawn([process.execPath, "src/main.ts"], {
      cwd: ROOT,
      env: env({ DATABASE_URL: `postgres://postgres:hunter2@127.0.0.1:${port}/gw`, DB_CONNECT_TIMEOUT_SECONDS: "2" }),
      stdout: "pipe",
      stderr: "pipe",
    });
    const [code, stderr] = await Promise.all([p.exited, new Response(p.stderr).text()]);
    const seconds = (performance.now() - t0) / 1000;
    expect(code).not.toBe(0);
    expect(seconds).toBeGreaterThan(1.9);
    expect(seconds).toBeLessThan(10);
    const lines = expectSentences(stderr);
    expect(lines[0]).toContain(`PostgreSQL at 127.0.0.1:${port}/gw refused the connection`);
    expect(lines.length).toBeGreaterThan(2); // it did retry
    expect(lines.at(-1)).toBe(
      `Giving up: no usable connection to PostgreSQL at 127.0.0.1:${port}/gw within DB_CONNECT_TIMEOUT_SECONDS=2.`,
    );
    expect(stderr).not.toContain("hunter2");
  }, 30_000);

  test("a malformed URL fails at once, in one sentence, without the password", async () => {
    const t0 = performance.now();
    const p = Bun.spawn([process.execPath, "src/main.ts"], {
      cwd: ROOT,
      env: env({ DATABASE_URL: "postgres://postgres:hunter2@db:port/gw" }),
      stdout: "pipe",
      stderr: "pipe",
    });
    const [code, stderr] = await Promise.all([p.exited, new Response(p.stderr).text()]);
    expect(code).toBe(2);
    expect((performance.now() - t0) / 1000).toBeLessThan(8);
    expect(stderr).toContain("DATABASE_URL: not a valid URL");
    expect(stderr).not.toContain("hunter2");
    expect(stderr).not.toMatch(/^\s+at /m);
  }, 30_000);

  test("a database that comes up after the gateway: the gateway waits, then serves", async () => {
    if (!(await postgresAvailable())) return;
    const db = await freshPostgres();
    // A TCP proxy that hangs up on every connection until the gateway says it is retrying
    // (however long the process takes to load, it meets a database that is not up yet), then
    // forwards to the real server.
    const proxy = new TcpProxy("127.0.0.1", 5432).start();
    proxy.cut("refuse");
    const proxyPort = proxy.port;
    const e = env({
      DATABASE_URL: db.url.replace(/127\.0\.0\.1:5432|localhost:5432/, `127.0.0.1:${proxyPort}`),
      DB_CONNECT_TIMEOUT_SECONDS: "30",
    });
    expect(e.DATABASE_URL).toContain(`:${proxyPort}/`);
    const t0 = performance.now();
    const p = Bun.spawn([process.execPath, "src/main.ts"], { cwd: ROOT, env: e, stdout: "ignore", stderr: "pipe" });
    const stderr = (async () => {
      let text = "";
      const decoder = new TextDecoder();
      for await (const chunk of p.stderr) {
        text += decoder.decode(chunk, { stream: true });
        if (text.includes("retrying in")) proxy.restore();
      }
      return text;
    })();
    try {
      let ready = 0;
      for (let i = 0; i < 300 && !ready; i++) {
        await Bun.sleep(100);
        if (p.exitCode !== null) break;
        const r = await fetch(`http://127.0.0.1:${e.PORT}/readyz`).catch(() => null);
        if (r?.status === 200) ready = performance.now() - t0;
      }
      expect(p.exitCode).toBeNull();
      expect(ready).toBeGreaterThan(0);
      expect(proxy.accepted).toBeGreaterThan(1);
      p.kill("SIGTERM");
      expect(await p.exited).toBe(0);
      const lines = expectSentences(await stderr);
      expect(lines[0]).toMatch(
        /^PostgreSQL at 127\.0\.0\.1:\d+\/\w+ closed the connection before it was ready; retrying in [\d.]+ s\.$/,
      );
      expect(lines.at(-1)).toMatch(/^PostgreSQL at .* answered after \d+ attempts\.$/);
    } finally {
      p.kill("SIGKILL");
      proxy.stop();
      await db.drop();
    }
  }, 60_000);
});
