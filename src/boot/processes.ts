/**
 * Every core of a host: `--processes N` (or `PROCESSES=N`, `auto` = the cores) makes this process
 * a small supervisor of N gateway processes that listen on one port with `reusePort` (the kernel
 * spreads the connections), each with its own JavaScript thread (docs/scaling.md, "One host,
 * several processes"; docs/decisions.md #54). The supervisor migrates the database and makes the
 * persistent secrets once, starts the processes, starts again one that dies (a `kill -9` loses
 * only that process's calls in flight: answered calls were charged before their last bytes),
 * answers `/metrics` for the whole host (src/boot/host-metrics.ts), and on SIGTERM or SIGINT
 * stops them all (each with its own clean shutdown, src/boot/shutdown.ts) and exits with the
 * worst of their codes.
 *
 * What cannot be correct across processes is refused before anything starts: the embedded
 * PGlite (one process owns its files), rate limits and throttles without Redis (each process
 * would count its own), demo mode (it seeds and generates secrets at start), a fixed SIM_PORT.
 */
import type { Subprocess } from "bun";
import { availableParallelism } from "node:os";
import type { Config } from "../config";
import { openDatabase } from "../db/client";
import { runMigrations } from "../db/migrate";
import { log } from "../lib/log";
import { mergeMetrics, type HostMessage } from "./host-metrics";
import { persistentSecret } from "./secrets";

/** Set by the supervisor in each gateway process's environment: its index, 0 to N−1. */
export const PROCESS_INDEX_ENV = "GATEWAY_PROCESS_INDEX";

/** This process's index when a supervisor started it; undefined for a lone gateway. */
export function processIndex(env: Record<string, string | undefined> = process.env): number | undefined {
  const v = env[PROCESS_INDEX_ENV];
  return v !== undefined && /^\d+$/.test(v) ? Number(v) : undefined;
}

/** A `PROCESSES` / `--processes` value as a count (`auto`: the cores this process may use); null when invalid. */
export function processCount(value: string): number | null {
  const v = value.trim().toLowerCase();
  if (v === "auto") return availableParallelism();
  return /^[1-9]\d{0,2}$/.test(v) ? Number(v) : null;
}

/** The `--processes` value of the command line (`--processes N` or `--processes=N`), if any. */
export function processesFlag(args: readonly string[]): string | undefined {
  if (args[0] === "--processes") return args[1] ?? "";
  if (args[0]?.startsWith("--processes=")) return args[0].slice("--processes=".length);
  return undefined;
}

/** Why `n` processes cannot run with this configuration (one sentence for the operator), or null. */
export function processesRefusal(n: number, cfg: Config): string | null {
  if (n <= 1) return null;
  const asked = `${n} processes were asked for (--processes / PROCESSES)`;
  if (!cfg.DATABASE_URL)
    return `${asked}, but the embedded PGlite database (DATABASE_URL unset) can be opened by one process only: set DATABASE_URL to a PostgreSQL database, or run one process.`;
  if (!cfg.REDIS_URL)
    return `${asked}, but without REDIS_URL each process would count the rate limits (RATE_LIMIT_RPM, ACCOUNT_RATE_LIMIT_RPM), the sign-up, login and admin throttles and the count_tokens limits on its own, allowing ${n} times each: set REDIS_URL, or run one process.`;
  if (cfg.demoMode)
    return `${asked}, but demo mode seeds its account and generates its secrets at start, in one process: set DEMO_MODE=false, or run one process.`;
  if (cfg.simulator && cfg.SIM_PORT !== 0)
    return `${asked}, but each process would start its simulator on SIM_PORT=${cfg.SIM_PORT}: set SIM_PORT=0, or run one process.`;
  return null;
}

interface Child {
  index: number;
  proc: Subprocess;
  startedAt: number;
}

/** A process that dies within this long of its start counts towards a crash loop. */
const STABLE_MS = 10_000;
/** Starts in a row, each dying within STABLE_MS, after which the supervisor gives up. */
const CRASH_LOOP = 5;

/** Runs N gateway processes until SIGTERM / SIGINT; resolves with the exit code. */
export async function supervise(n: number, cfg: Config): Promise<number> {
  // Once, before N processes race for them: the schema, and the JWT secret kept in DATA_DIR.
  const db = await openDatabase({ url: cfg.DATABASE_URL!, max: 1 });
  await runMigrations(db);
  await db.close();
  persistentSecret(cfg, "jwt-secret", cfg.JWT_SECRET, 48);

  // From source: bun + this entry point; a single binary is its own entry point.
  const cmd = Bun.isStandaloneExecutable ? [process.execPath] : [process.execPath, Bun.main];
  const children: (Child | null)[] = Array.from({ length: n }, () => null);
  const quickDeaths = Array.from({ length: n }, () => 0);
  let stopping = false;
  let restarts = 0;
  let gaveUp = false;
  let finish: (code: number) => void = () => {};
  const done = new Promise<number>((r) => (finish = r));
  const gathers = new Map<number, { texts: (string | null)[]; left: number; reply: () => void }>();
  let gatherId = 0;

  const exitCodes: number[] = [];
  const allExited = () => children.every((c) => c === null);

  const start = (index: number) => {
    const proc = Bun.spawn(cmd, {
      env: {
        ...process.env,
        [PROCESS_INDEX_ENV]: String(index),
        PROCESSES: "1",
        // One stats rollup per host is enough (it is safe from several: it locks its state row).
        ...(index > 0 && { STATS_ROLLUP_INTERVAL_MS: "0" }),
      },
      stdio: ["ignore", "inherit", "inherit"],
      ipc: (m: HostMessage) => onMessage(index, m),
      onExit: (_p, code, signal) => exited(index, code, signal),
    });
    children[index] = { index, proc, startedAt: performance.now() };
    log.info("gateway process started", { index, pid: proc.pid });
  };

  const exited = (index: number, code: number | null, signal: number | NodeJS.Signals | null) => {
    const child = children[index]!;
    children[index] = null;
    // A scrape waiting for it goes on without it.
    for (const g of [...gathers.values()]) if (g.texts[index] === null && --g.left <= 0) g.reply();
    if (stopping) {
      exitCodes.push(code ?? 1);
      if (allExited()) finish(Math.max(0, ...exitCodes));
      return;
    }
    const lived = performance.now() - child.startedAt;
    quickDeaths[index] = lived < STABLE_MS ? quickDeaths[index]! + 1 : 0;
    if (quickDeaths[index]! >= CRASH_LOOP) {
      log.error("gateway process keeps dying at start; stopping the others", { index, code, signal });
      gaveUp = true;
      stopAll("crash loop");
      return;
    }
    restarts++;
    // Its calls in flight are lost with it (their holds expire and are swept); the others serve on.
    const wait = Math.min(5000, 100 * 2 ** quickDeaths[index]!);
    log.warn("gateway process died; starting it again", { index, pid: child.proc.pid, code, signal, in_ms: wait });
    setTimeout(() => !stopping && start(index), wait);
  };

  const onMessage = (index: number, m: HostMessage) => {
    if (m?.t === "metrics?") {
      const asker = children[index];
      const id = gatherId++;
      const live = children.filter((c): c is Child => c !== null);
      const texts: (string | null)[] = Array.from({ length: n }, () => null);
      let sent = false;
      const reply = () => {
        if (sent) return;
        sent = true;
        gathers.delete(id);
        const host = hostFamilies(texts.filter((t) => t !== null).length, n, restarts);
        try {
          asker?.proc.send({ t: "metrics=", id: m.id, text: mergeMetrics(texts) + host } satisfies HostMessage);
        } catch {} // the asking process died meanwhile
      };
      gathers.set(id, { texts, left: live.length, reply });
      setTimeout(reply, 2000); // a process that does not answer is left out of this scrape
      for (const c of live)
        try {
          c.proc.send({ t: "metrics!", id } satisfies HostMessage);
        } catch {
          if (--gathers.get(id)!.left <= 0) reply();
        }
    } else if (m?.t === "metrics") {
      const g = gathers.get(m.id);
      if (!g) return;
      g.texts[index] = m.text;
      if (--g.left <= 0) g.reply();
    }
  };

  const stopAll = (why: string) => {
    if (stopping) return;
    stopping = true;
    log.info("stopping the gateway processes", { why });
    for (const c of children) c?.proc.kill("SIGTERM");
    if (allExited()) finish(gaveUp ? 1 : 0);
    // Each process exits within SHUTDOWN_DRAIN_MS; one that does not is killed.
    setTimeout(() => {
      for (const c of children) c?.proc.kill("SIGKILL");
    }, cfg.SHUTDOWN_DRAIN_MS + 5000).unref();
  };
  process.on("SIGTERM", () => stopAll("SIGTERM"));
  process.on("SIGINT", () => stopAll("SIGINT"));

  log.info("starting gateway processes", { processes: n, port: cfg.PORT });
  for (let i = 0; i < n; i++) start(i);
  const code = await done;
  return gaveUp ? Math.max(1, code) : code;
}

/** The supervisor's own families: processes that answered the scrape, processes asked for, restarts so far. */
function hostFamilies(running: number, asked: number, restarts: number): string {
  return [
    "# HELP gateway_processes Gateway processes of this host in this scrape (one starting again is not yet)",
    "# TYPE gateway_processes gauge",
    `gateway_processes ${running}`,
    "# HELP gateway_processes_configured Gateway processes asked for (--processes / PROCESSES)",
    "# TYPE gateway_processes_configured gauge",
    `gateway_processes_configured ${asked}`,
    "# HELP gateway_process_restarts_total Gateway processes started again after they died",
    "# TYPE gateway_process_restarts_total counter",
    `gateway_process_restarts_total ${restarts}`,
    "",
  ].join("\n");
}
