/** `--help`, `--version` and `--check-config`, run as an operator would (a real process). */
import { describe, expect, test } from "bun:test";
import { resolve } from "node:path";
import pkg from "../../package.json" with { type: "json" };
import { freePort } from "../support/procs";

const ROOT = resolve(import.meta.dir, "../..");

async function run(
  args: string[],
  extra: Record<string, string> = {},
): Promise<{ code: number; out: string; err: string; ms: number }> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env))
    if (v !== undefined && !/^(PORT|DATABASE_URL|DEMO_MODE|[A-Z]+_API_KEY)$/.test(k)) env[k] = v;
  const t0 = performance.now();
  const p = Bun.spawn([process.execPath, "src/main.ts", ...args], {
    cwd: ROOT,
    env: { ...env, ...extra },
    stdout: "pipe",
    stderr: "pipe",
  });
  const [code, out, err] = await Promise.all([p.exited, new Response(p.stdout).text(), new Response(p.stderr).text()]);
  return { code, out, err, ms: performance.now() - t0 };
}

describe("command line", () => {
  test("--help: usage, the main variables, a pointer to the README", async () => {
    const r = await run(["--help"]);
    expect(r.code).toBe(0);
    expect(r.out).toContain("Usage: gateway [--help | --version | --check-config | --processes N]");
    for (const name of [
      "PORT",
      "DATABASE_URL",
      "DB_CONNECT_TIMEOUT_SECONDS",
      "DATA_DIR",
      "ADMIN_TOKEN",
      "REDIS_URL",
      "<PROVIDER>_API_KEY",
    ])
      expect(r.out).toContain(name);
    expect(r.out).toContain("README.md");
  });

  test("--version: the package version and the commit", async () => {
    const r = await run(["--version"]);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(
      new RegExp(`^model-gateway ${pkg.version.replace(/\./g, "\\.")}( \\(commit [0-9a-f]{7,}\\))?\\n$`),
    );
  });

  test("--check-config: OK with a summary, without opening the database or listening", async () => {
    const port = freePort();
    const dbPort = freePort(); // nothing listens there: a start would wait DB_CONNECT_TIMEOUT_SECONDS
    const r = await run(["--check-config"], {
      PORT: String(port),
      DATABASE_URL: `postgres://gw:secret@127.0.0.1:${dbPort}/gw`,
      OPENAI_API_KEY: "sk-x",
      ANTHROPIC_BASE_URL: "http://127.0.0.1:1",
      DB_CONNECT_TIMEOUT_SECONDS: "60",
    });
    expect([r.code, r.err]).toEqual([0, ""]);
    expect(r.ms).toBeLessThan(15_000);
    const lines = r.out.trimEnd().split("\n");
    expect(lines[0]).toBe("configuration OK");
    expect(r.out).toContain("mode: production");
    expect(r.out).toContain(`database: PostgreSQL at 127.0.0.1:${dbPort}/gw`);
    expect(r.out).toContain("providers with a credential: OPENAI; base URL only: ANTHROPIC");
    expect(r.out).toContain("catalog: verified");
    expect(r.out).not.toContain("secret");
    // Nothing listened on the port meanwhile: it is still free.
    const s = Bun.listen({ hostname: "0.0.0.0", port, socket: { data() {} } });
    s.stop(true);
  });

  test("--check-config in demo mode names PGlite", async () => {
    const r = await run(["--check-config"], { DATA_DIR: "/tmp/gw-nowhere" });
    expect(r.code).toBe(0);
    expect(r.out).toContain("mode: demo");
    expect(r.out).toContain("database: embedded PGlite in /tmp/gw-nowhere");
  });

  test("--check-config with bad values: one sentence per problem on stderr, exit 1", async () => {
    const r = await run(["--check-config"], {
      PORT: "http",
      DEMO_MODE: "maybe",
      DATABASE_URL: "postgres://u:secret@h:x/db",
    });
    expect(r.code).toBe(1);
    expect(r.out).toBe("");
    expect(r.err.trimEnd().split("\n").sort()).toEqual([
      "DATABASE_URL: not a valid URL (expected postgres://user:password@host:5432/database)",
      'DEMO_MODE: expected one of true, false, on, off, 1, 0 (any case), got "maybe"',
      'PORT: expected a number, got "http"',
    ]);
  });

  test("an unknown option is refused, nothing starts", async () => {
    const r = await run(["--chekc-config"]);
    expect(r.code).toBe(2);
    expect(r.err).toBe('unknown option "--chekc-config"; see --help.\n');
  });
});
