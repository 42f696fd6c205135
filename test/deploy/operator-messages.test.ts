/**
 * What the operator is told, as real `bun src/main.ts` processes (issue 31, point 8): `--help`
 * and `--check-config` say an unconfigured provider is refused outside demo mode (not simulated),
 * a start with no provider configured warns in one line, and a port in use is one sentence and a
 * non-zero exit, not a stack trace.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { freePort } from "../support/procs";

const ROOT = resolve(import.meta.dir, "../..");
const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

/** The environment without the machine's own provider keys, database or mode. */
function env(extra: Record<string, string>): Record<string, string> {
  const dataDir = mkdtempSync(join(tmpdir(), "gw-msg-"));
  dirs.push(dataDir);
  const base: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env))
    if (v !== undefined && !/^(PORT|HOST|DATABASE_URL|DEMO_MODE|SIMULATOR|[A-Z]+_API_KEY|[A-Z]+_BASE_URL)$/.test(k))
      base[k] = v;
  return {
    ...base,
    HOST: "127.0.0.1",
    PORT: String(freePort()),
    DATA_DIR: dataDir,
    LOG_LEVEL: "info",
    STATS_ROLLUP_INTERVAL_MS: "0",
    VIDEO_POLL_WORKERS: "0",
    ...extra,
  };
}

async function run(args: string[], extra: Record<string, string>) {
  const p = Bun.spawn([process.execPath, "src/main.ts", ...args], {
    cwd: ROOT,
    env: env(extra),
    stdout: "pipe",
    stderr: "pipe",
  });
  const [code, out, err] = await Promise.all([p.exited, new Response(p.stdout).text(), new Response(p.stderr).text()]);
  return { code, out, err };
}

describe("operator messages", () => {
  test("--help: an unset credential is refused, simulated only in demo mode or with SIMULATOR=on", async () => {
    const r = await run(["--help"], {});
    expect(r.code).toBe(0);
    const line = r.out.split("\n").find((l) => l.includes("<PROVIDER>_API_KEY"))!;
    expect(line).toContain("refused");
    expect(line).toContain("except in demo mode or with SIMULATOR=on");
    expect(line).not.toMatch(/unset = the built-in simulator/);
  });

  test("--check-config in production: other providers refused, not simulated", async () => {
    const r = await run(["--check-config"], { DEMO_MODE: "off", OPENAI_API_KEY: "sk-x" });
    expect(r.code).toBe(0);
    expect(r.out).toContain("mode: production");
    expect(r.out).toContain(
      "providers with a credential: OPENAI; calls to every other provider are refused (503 provider_not_configured)",
    );
    expect(r.out).not.toContain("served by the built-in simulator");
    const none = await run(["--check-config"], { DEMO_MODE: "off" });
    expect(none.out).toContain("providers with a credential: none; calls to every provider are refused");
  });

  test("--check-config says when the simulator does answer: demo mode, SIMULATOR=on", async () => {
    const demo = await run(["--check-config"], {});
    expect(demo.out).toContain("every provider is served by the built-in simulator (demo mode)");
    const staging = await run(["--check-config"], { DEMO_MODE: "off", SIMULATOR: "on", OPENAI_API_KEY: "sk-x" });
    expect(staging.out).toContain("every other provider is served by the built-in simulator (SIMULATOR=on");
  });

  test("a production start with no provider configured warns once", async () => {
    const e = env({ DEMO_MODE: "off", ADMIN_TOKEN: "operator-token-0123456789" });
    const p = Bun.spawn([process.execPath, "src/main.ts"], { cwd: ROOT, env: e, stdout: "pipe", stderr: "pipe" });
    const lines: any[] = [];
    const reader = p.stdout.getReader();
    let buf = "";
    const deadline = Date.now() + 60_000;
    while (!lines.some((l) => l.msg === "gateway listening") && Date.now() < deadline) {
      const { value, done } = await reader.read();
      if (done) break;
      buf += new TextDecoder().decode(value);
      const parts = buf.split("\n");
      buf = parts.pop()!;
      for (const l of parts) if (l.trim().startsWith("{")) lines.push(JSON.parse(l));
    }
    p.kill("SIGTERM");
    await p.exited;
    expect(lines.some((l) => l.msg === "gateway listening")).toBe(true);
    const warnings = lines.filter((l) => l.level === "warn" && String(l.msg).startsWith("no provider is configured"));
    expect(warnings).toHaveLength(1);
    expect(warnings[0].msg).toContain("refused with 503 provider_not_configured");
  }, 90_000);

  test("a port in use: one sentence on stderr and exit 1, no stack trace", async () => {
    const busy = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
    try {
      const r = await run([], { DEMO_MODE: "off", PORT: String(busy.port), LOG_LEVEL: "error" });
      expect(r.code).toBe(1);
      const lines = r.err.split("\n").filter((l) => l.trim() !== "");
      expect(lines).toEqual([
        `The gateway could not start: port ${busy.port} on 127.0.0.1 is already in use (set PORT or HOST).`,
      ]);
    } finally {
      busy.stop(true);
    }
  }, 90_000);
});
