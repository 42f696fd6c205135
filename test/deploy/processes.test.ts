/**
 * `--processes N` / `PROCESSES` refused where several processes could not be correct
 * (src/boot/processes.ts), as an operator meets it: one sentence on stderr, exit code 2, before
 * the database is opened or a port is taken. Serving from several processes is
 * test/reliability/processes.test.ts.
 */
import { describe, expect, test } from "bun:test";
import { resolve } from "node:path";
import { freePort } from "../support/procs";

const ROOT = resolve(import.meta.dir, "../..");

async function run(args: string[], extra: Record<string, string>): Promise<{ code: number; err: string }> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env))
    if (v !== undefined && !/^(PORT|DATABASE_URL|REDIS_URL|DEMO_MODE|PROCESSES|[A-Z]+_API_KEY)$/.test(k)) env[k] = v;
  const p = Bun.spawn([process.execPath, "src/main.ts", ...args], {
    cwd: ROOT,
    env: { ...env, PORT: String(freePort()), ...extra },
    stdout: "pipe",
    stderr: "pipe",
  });
  const [code, err] = await Promise.all([p.exited, new Response(p.stderr).text()]);
  return { code, err };
}

// Nothing listens there: a start that got as far as the database would wait for it.
const unreachablePg = () => `postgres://gw:secret@127.0.0.1:${freePort()}/gw`;

describe("several processes refused", () => {
  test("the embedded PGlite with --processes 2: one process owns the database", async () => {
    const r = await run(["--processes", "2"], { DEMO_MODE: "false", REDIS_URL: "redis://127.0.0.1:6379" });
    expect(r.code).toBe(2);
    expect(r.err).toContain("PGlite");
    expect(r.err).toContain("one process only");
  });

  test("PROCESSES=2 without REDIS_URL: the limits would be counted per process", async () => {
    const r = await run([], { PROCESSES: "2", DATABASE_URL: unreachablePg() });
    expect(r.code).toBe(2);
    expect(r.err).toContain("REDIS_URL");
    expect(r.err).toContain("2 times each");
  });

  test("demo mode with several processes", async () => {
    const r = await run(["--processes=2"], {
      DATABASE_URL: unreachablePg(),
      REDIS_URL: "redis://127.0.0.1:6379",
      DEMO_MODE: "true",
    });
    expect(r.code).toBe(2);
    expect(r.err).toContain("demo mode");
  });

  test("a count that is none: --processes 0, PROCESSES=many", async () => {
    const flag = await run(["--processes", "0"], {});
    expect(flag.code).toBe(2);
    expect(flag.err).toContain('--processes: expected a count from 1 to 999 or "auto", got "0"');
    const env = await run([], { PROCESSES: "many" });
    expect(env.code).toBe(2);
    expect(env.err).toContain("PROCESSES");
  });
});

test("--check-config says the same refusal, exit 1", async () => {
  const r = await run(["--check-config"], { PROCESSES: "3", DATABASE_URL: unreachablePg() });
  expect(r.code).toBe(1);
  expect(r.err).toContain("3 processes were asked for");
  expect(r.err).toContain("REDIS_URL");
});
