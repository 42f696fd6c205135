/**
 * Real processes for the reliability, deploy and observability tests (and the benches): the
 * upstream simulator and gateways started with
 * `bun src/main.ts` (so a SIGKILL or SIGTERM hits a real process, not a test object), each on
 * a fixed port, every provider pointed at the one simulator.
 */
import type { Subprocess } from "bun";
import { createWriteStream, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { ADMIN_TOKEN, UNLIMITED_ENV } from "../harness";
import { TEST_JWT_SECRET } from "./http";

const ROOT = resolve(import.meta.dir, "../..");
const BUN = process.execPath;
const PROVIDERS = [
  "openai",
  "anthropic",
  "google",
  "deepseek",
  "together",
  "groq",
  "kling",
  "ltx",
  "seedance",
  "veo",
  "brave",
];

/** A port nobody listens on right now. */
export function freePort(): number {
  const s = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const port = s.port;
  s.stop(true);
  return port;
}

async function waitHttp(url: string, ms: number, proc?: Subprocess): Promise<void> {
  const until = performance.now() + ms;
  for (;;) {
    try {
      const r = await fetch(url, { signal: AbortSignal.timeout(1000) });
      if (r.ok) return;
    } catch {}
    if (proc?.exitCode !== null && proc?.exitCode !== undefined)
      throw new Error(`${url}: process exited with ${proc.exitCode}`);
    if (performance.now() > until) throw new Error(`${url} not ready after ${ms} ms`);
    await Bun.sleep(50);
  }
}

export class SimProcess {
  readonly port = freePort();
  readonly url = `http://127.0.0.1:${this.port}`;
  private proc: Subprocess | null = null;

  async start(): Promise<this> {
    this.proc = Bun.spawn([BUN, "src/sim/main.ts"], {
      cwd: ROOT,
      env: { ...process.env, SIM_PORT: String(this.port), SIM_HOST: "127.0.0.1" },
      stdout: "ignore",
      stderr: "inherit",
    });
    await waitHttp(`${this.url}/sim/stats`, 15_000, this.proc);
    return this;
  }

  /** Environment that sends every provider of the catalog (and Brave) to this simulator. */
  providerEnv(): Record<string, string> {
    const env: Record<string, string> = {};
    for (const p of PROVIDERS) {
      env[`${p.toUpperCase()}_BASE_URL`] = `${this.url}/sim/${p}`;
      env[`${p.toUpperCase()}_API_KEY`] = "simulated";
    }
    return env;
  }

  async stop(): Promise<void> {
    this.proc?.kill("SIGTERM");
    await this.proc?.exited;
  }
}

export class GatewayProcess {
  readonly port = freePort();
  readonly url = `http://127.0.0.1:${this.port}`;
  proc: Subprocess | null = null;
  private dataDir = mkdtempSync(join(tmpdir(), "gw-proc-"));
  readonly logFile = join(this.dataDir, "gateway.log");
  /** Exit codes of earlier incarnations (a SIGKILL shows as null code / signal). */
  starts = 0;

  constructor(private env: Record<string, string>) {}

  async start(extra: Record<string, string> = {}): Promise<this> {
    this.starts++;
    const log = Bun.file(this.logFile);
    const env = {
      ...process.env,
      PORT: String(this.port),
      HOST: "127.0.0.1",
      DATA_DIR: this.dataDir,
      ADMIN_TOKEN,
      JWT_SECRET: TEST_JWT_SECRET,
      DEMO_MODE: "false",
      LOG_LEVEL: "warn",
      RATE_LIMIT_RPM: "0",
      RETRY_BASE_MS: "5",
      ...UNLIMITED_ENV,
      ...this.env,
      ...extra,
    };
    const out = createWriteStream(this.logFile, { flags: "a" });
    out.write(`--- start ${this.starts} ---\n`);
    this.proc = Bun.spawn([BUN, "src/main.ts"], { cwd: ROOT, env, stdout: "pipe", stderr: "pipe" });
    void pipeTo(this.proc.stdout as ReadableStream<Uint8Array>, out);
    void pipeTo(this.proc.stderr as ReadableStream<Uint8Array>, out);
    void log;
    await waitHttp(`${this.url}/readyz`, 30_000, this.proc);
    return this;
  }

  kill(signal: "SIGKILL" | "SIGTERM"): void {
    this.proc?.kill(signal);
  }

  async exited(): Promise<number | null> {
    return (await this.proc?.exited) ?? null;
  }

  async stop(): Promise<void> {
    if (this.proc && this.proc.exitCode === null && this.proc.signalCode === null) {
      this.proc.kill("SIGTERM");
      const done = await Promise.race([this.proc.exited.then(() => true), Bun.sleep(30_000).then(() => false)]);
      if (!done) this.proc.kill("SIGKILL");
    }
  }

  async log(): Promise<string> {
    return Bun.file(this.logFile)
      .text()
      .catch(() => "");
  }

  cleanup(): void {
    rmSync(this.dataDir, { recursive: true, force: true });
  }
}

async function pipeTo(stream: ReadableStream<Uint8Array>, out: NodeJS.WritableStream): Promise<void> {
  try {
    for await (const chunk of stream) out.write(chunk);
  } catch {}
}

/** JSON call against a process (status and parsed body); network failures are thrown. */
export async function call(
  base: string,
  method: string,
  path: string,
  opts: { token?: string; body?: unknown; signal?: AbortSignal } = {},
): Promise<{ status: number; body: any; headers: Headers }> {
  const headers: Record<string, string> = {};
  if (opts.token) headers.authorization = `Bearer ${opts.token}`;
  if (opts.body !== undefined) headers["content-type"] = "application/json";
  const r = await fetch(base + path, {
    method,
    headers,
    body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
    signal: opts.signal,
  });
  const text = await r.text();
  let body: any = text;
  try {
    body = text ? JSON.parse(text) : null;
  } catch {}
  return { status: r.status, body, headers: r.headers };
}
