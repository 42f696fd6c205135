/**
 * The gateway sets Bun's limit on simultaneous outgoing fetches itself (4096 unless the
 * operator sets BUN_CONFIG_MAX_HTTP_REQUESTS), from source and in a compiled binary: measured
 * as the most requests a test server sees at once from one probe process.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

const ROOT = resolve(import.meta.dir, "../..");
const PROBE = join(import.meta.dir, "fetch-limit-probe.ts");
const FETCHES = 300; // above Bun's own default of 256

let open = 0;
let peak = 0;
let server: ReturnType<typeof Bun.serve>;
const dir = mkdtempSync(join(tmpdir(), "gw-fetch-limit-"));

beforeAll(() => {
  server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    idleTimeout: 30,
    async fetch() {
      peak = Math.max(peak, ++open);
      await Bun.sleep(1500); // long enough for every fetch the client allows to arrive
      open--;
      return new Response("ok");
    },
  });
});
afterAll(() => {
  server.stop(true);
  rmSync(dir, { recursive: true, force: true });
});

function cleanEnv(extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env))
    if (v !== undefined && k !== "BUN_CONFIG_MAX_HTTP_REQUESTS") env[k] = v;
  return { ...env, PROBE_URL: `http://127.0.0.1:${server.port}/`, PROBE_FETCHES: String(FETCHES), ...extra };
}

async function peakOf(cmd: string[], env: Record<string, string>): Promise<{ peak: number; out: string; pid: number }> {
  peak = 0;
  const p = Bun.spawn(cmd, { cwd: ROOT, env, stdout: "pipe", stderr: "pipe" });
  const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  expect([code, err]).toEqual([0, ""]);
  return { peak, out, pid: p.pid };
}

describe("Bun's fetch limit is set by the gateway itself", () => {
  test("from source: unset means 4096 (all 300 fetches at once), in the same process", async () => {
    const r = await peakOf([process.execPath, PROBE], cleanEnv());
    expect(r.peak).toBe(FETCHES);
    expect(r.out).toContain(`pid ${r.pid} limit 4096`); // replaced itself (execve), no child left behind
  }, 30_000);

  test("an operator's value wins", async () => {
    const r = await peakOf([process.execPath, PROBE], cleanEnv({ BUN_CONFIG_MAX_HTTP_REQUESTS: "100" }));
    expect(r.peak).toBe(100);
  }, 30_000);

  test("in a compiled binary", async () => {
    const bin = join(dir, "probe");
    const build = Bun.spawnSync([process.execPath, "build", "--compile", PROBE, "--outfile", bin], {
      cwd: ROOT,
      stdout: "pipe",
      stderr: "pipe",
    });
    expect(build.stderr.toString()).not.toContain("error");
    expect(build.success).toBe(true);
    const r = await peakOf([bin], cleanEnv());
    expect(r.peak).toBe(FETCHES);
    expect(r.out).toContain(`pid ${r.pid} limit 4096`);
  }, 60_000);
});
