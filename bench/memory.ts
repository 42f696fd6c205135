/**
 * Memory of the default path: `npm start` (demo mode, embedded PGlite, the built-in simulator)
 * on a fresh DATA_DIR, then restarted on the same directory. For each start it samples the
 * resident set of the gateway (and of any process it spawns) every 50 ms, from the spawn
 * through a few hundred chat calls to an idle pause, and reports:
 *   peak   — the highest resident set (sampled, or the kernel's VmHWM if higher)
 *   steady — the median over the last 3 s of the idle pause after the calls
 *
 *   ./node_modules/.bin/bun bench/memory.ts [--calls=300] [--idle=10] [--binary=dist/gateway] [--json=FILE]
 *
 * `npm run bench` runs it as its `memory` scenario (before the PostgreSQL stack starts).
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { freePort } from "./lib/procs";

const ROOT = resolve(import.meta.dir, "..");

export interface MemoryOptions {
  /** Chat calls driven through each start (a third of them streamed). */
  calls: number;
  /** Seconds of idle after the calls; steady is the median of its last 3 s. */
  idleSeconds: number;
  /** A compiled gateway (`npm run build`) instead of `bun src/main.ts`. */
  binary?: string;
}

export interface StartFigures {
  readyMs: number;
  peakMiB: number;
  atReadyMiB: number;
  afterCallsMiB: number;
  steadyMiB: number;
  ok: number;
  errors: number;
  firstError?: string;
}

export interface MemoryResult {
  command: string;
  calls: number;
  idleSeconds: number;
  first: StartFigures;
  restart: StartFigures;
}

function status(pid: number, key: string): number {
  try {
    const m = new RegExp(`${key}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return m ? Number(m[1]) / 1024 : 0;
  } catch {
    return 0; // gone between the listing and the read
  }
}

/** RSS (MiB) of `pid` and all its descendants. */
function treeRss(pid: number): number {
  const children = new Map<number, number[]>();
  for (const d of readdirSync("/proc")) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const ppid = Number(readFileSync(`/proc/${d}/stat`, "utf8").split(") ")[1]!.split(" ")[1]);
      children.set(ppid, [...(children.get(ppid) ?? []), Number(d)]);
    } catch {}
  }
  let sum = 0;
  for (const todo = [pid]; todo.length; ) {
    const p = todo.pop()!;
    sum += status(p, "VmRSS");
    todo.push(...(children.get(p) ?? []));
  }
  return sum;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;
const r1 = (x: number) => Math.round(x * 10) / 10;

async function oneStart(
  o: MemoryOptions,
  dataDir: string,
  key: string | null,
): Promise<{ figures: StartFigures; key: string }> {
  const port = await freePort();
  const cmd = o.binary ? [resolve(o.binary)] : [process.execPath, join(ROOT, "src/main.ts")];
  // What `npm start` gets, plus a port and no per-key or per-account rate limit (60 and 600 a
  // minute would refuse most of the calls). No BUN_CONFIG_MAX_HTTP_REQUESTS: the gateway re-executes itself as it does there.
  const env = {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: process.env.HOME ?? "/root",
    DATA_DIR: dataDir,
    PORT: String(port),
    HOST: "127.0.0.1",
    RATE_LIMIT_RPM: "0",
    ACCOUNT_RATE_LIMIT_RPM: "0",
  };
  const t0 = performance.now();
  const proc = Bun.spawn(cmd, { cwd: ROOT, env, stdout: "pipe", stderr: "pipe", stdin: "ignore" });
  let stderr = "";
  void (async () => {
    for await (const c of proc.stderr as ReadableStream<Uint8Array>) stderr += new TextDecoder().decode(c);
  })();
  void (async () => {
    for await (const _ of proc.stdout as ReadableStream<Uint8Array>);
  })();
  const samples: { t: number; rss: number }[] = [];
  const sampler = setInterval(() => samples.push({ t: performance.now(), rss: treeRss(proc.pid) }), 50);
  const base = `http://127.0.0.1:${port}`;
  try {
    // Ready: /healthz answers and the demo banner (printed after the demo seed) is out.
    for (;;) {
      if (proc.exitCode !== null) throw new Error(`the gateway exited (${proc.exitCode}):\n${stderr.slice(-2000)}`);
      const up = await fetch(`${base}/healthz`).then(
        (r) => r.ok,
        () => false,
      );
      if (up && /Demo (API key|account)/.test(stderr)) break;
      if (performance.now() - t0 > 120_000)
        throw new Error(`the gateway did not start within 120 s:\n${stderr.slice(-2000)}`);
      await Bun.sleep(50);
    }
    const readyMs = performance.now() - t0;
    key ??= /Demo API key \(shown once\): (\S+)/.exec(stderr)?.[1] ?? null;
    if (!key) throw new Error(`no demo key in the banner:\n${stderr.slice(-2000)}`);
    const atReady = treeRss(proc.pid);
    let sent = 0;
    let ok = 0;
    let errors = 0;
    let firstError: string | undefined;
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (sent < o.calls) {
          const n = ++sent;
          const body = {
            model: "gpt-4o-mini",
            messages: [{ role: "user", content: `Hello ${n}` }],
            ...(n % 3 === 0 && { stream: true }),
          };
          const res = await fetch(`${base}/v1/chat/completions`, {
            method: "POST",
            headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
            body: JSON.stringify(body),
          });
          const text = await res.text();
          if (res.ok) ok++;
          else {
            errors++;
            firstError ??= `${res.status} ${text.slice(0, 200)}`;
          }
        }
      }),
    );
    const afterCalls = treeRss(proc.pid);
    const idleFrom = performance.now();
    await Bun.sleep(o.idleSeconds * 1000);
    clearInterval(sampler);
    const hwm = status(proc.pid, "VmHWM");
    const tail = samples.filter((s) => s.t >= idleFrom + (o.idleSeconds - 3) * 1000).map((s) => s.rss);
    const figures: StartFigures = {
      readyMs: Math.round(readyMs),
      peakMiB: r1(Math.max(hwm, ...samples.map((s) => s.rss))),
      atReadyMiB: r1(atReady),
      afterCallsMiB: r1(afterCalls),
      steadyMiB: r1(median(tail)),
      ok,
      errors,
      ...(firstError && { firstError }),
    };
    return { figures, key };
  } finally {
    clearInterval(sampler);
    proc.kill("SIGTERM");
    const t = setTimeout(() => proc.kill("SIGKILL"), 30_000);
    await proc.exited;
    clearTimeout(t);
  }
}

export async function memoryScenario(o: MemoryOptions, log: (m: string) => void = console.log): Promise<MemoryResult> {
  const dataDir = mkdtempSync(join(tmpdir(), "gw-bench-mem-"));
  const show = (name: string, f: StartFigures) =>
    log(
      `memory ${name}: ready in ${(f.readyMs / 1000).toFixed(1)} s; RSS peak ${f.peakMiB} MiB, at ready ${f.atReadyMiB}, after ${o.calls} calls ${f.afterCallsMiB}, steady ${f.steadyMiB}; ${f.ok} ok, ${f.errors} errors${f.firstError ? ` (${f.firstError})` : ""}`,
    );
  try {
    const first = await oneStart(o, dataDir, null);
    show("first start", first.figures);
    const restart = await oneStart(o, dataDir, first.key);
    show("restart", restart.figures);
    return {
      command: o.binary ? "compiled binary" : "bun src/main.ts",
      calls: o.calls,
      idleSeconds: o.idleSeconds,
      first: first.figures,
      restart: restart.figures,
    };
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

if (import.meta.main) {
  const arg = (name: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.split("=")[1];
  const result = await memoryScenario({
    calls: Number(arg("calls") ?? 300),
    idleSeconds: Number(arg("idle") ?? 10),
    binary: arg("binary"),
  });
  const out = arg("json");
  if (out) writeFileSync(out, JSON.stringify(result, null, 2) + "\n");
  else console.log(JSON.stringify(result, null, 2));
}
