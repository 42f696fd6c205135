/**
 * Child processes of a benchmark run: spawned (optionally pinned to a core with taskset),
 * waited for on their port, measured (RSS from /proc), and always stopped by their own pid.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import type { Subprocess } from "bun";

export interface Child {
  name: string;
  proc: Subprocess;
  pid: number;
  /** The last lines it printed (for error messages when it dies). */
  output(): string;
  stop(): Promise<void>;
}

let tasksetPath: string | null | undefined;
export function taskset(): string | null {
  if (tasksetPath === undefined) tasksetPath = Bun.which("taskset");
  return tasksetPath;
}

/**
 * Spawns `cmd`; with `core` set (and taskset present), every thread runs on that core. With
 * `stdoutFile`, stdout goes to that file (the gateway's request log: a line per call, as in
 * production, without the runner reading each one).
 */
export function spawnChild(
  name: string,
  cmd: string[],
  env: Record<string, string>,
  core: number | null,
  stdoutFile?: string,
  stderrFile?: string,
): Child {
  const ts = taskset();
  const argv = core !== null && ts ? [ts, "-c", String(core), ...cmd] : cmd;
  const proc = Bun.spawn(argv, {
    env,
    stdout: stdoutFile ? Bun.file(stdoutFile) : "pipe",
    stderr: stderrFile ? Bun.file(stderrFile) : "pipe",
    stdin: "ignore",
  });
  const lines: string[] = [];
  const keep = async (s: ReadableStream<Uint8Array>) => {
    const dec = new TextDecoder();
    for await (const chunk of s) {
      lines.push(...dec.decode(chunk).split("\n").filter(Boolean));
      if (lines.length > 40) lines.splice(0, lines.length - 40);
    }
  };
  if (!stdoutFile) keep(proc.stdout as ReadableStream<Uint8Array>).catch(() => {});
  if (!stderrFile) keep(proc.stderr as ReadableStream<Uint8Array>).catch(() => {});
  return {
    name,
    proc,
    pid: proc.pid,
    output: () => lines.join("\n"),
    async stop() {
      if (proc.exitCode !== null || proc.signalCode !== null) return;
      proc.kill("SIGTERM");
      const t = setTimeout(() => proc.kill("SIGKILL"), 5000);
      await proc.exited;
      clearTimeout(t);
    },
  };
}

/** Resolves once `url` answers (any status); throws with the child's output if it died. */
export async function waitReady(child: Child, url: string, timeoutMs = 30_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    if (child.proc.exitCode !== null)
      throw new Error(`${child.name} exited (${child.proc.exitCode}):\n${child.output()}`);
    try {
      await fetch(url, { signal: AbortSignal.timeout(1000) });
      return;
    } catch {}
    if (Date.now() > until)
      throw new Error(`${child.name} did not answer ${url} within ${timeoutMs} ms:\n${child.output()}`);
    await Bun.sleep(100);
  }
}

/** Resident set size in MiB (VmRSS), or null where /proc is missing. */
export function rssMiB(pid: number): number | null {
  const f = `/proc/${pid}/status`;
  if (!existsSync(f)) return null;
  const m = /VmRSS:\s+(\d+)\s+kB/.exec(readFileSync(f, "utf8"));
  return m ? Math.round((Number(m[1]) / 1024) * 10) / 10 : null;
}

/**
 * User + system CPU ms of one /proc `stat` line (a process's or a thread's). The fields are
 * counted from the last `)`, since the name before it may itself hold spaces and parentheses.
 */
export function statCpuMs(stat: string): number {
  const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  const ticks = Number(f[11]) + Number(f[12]); // utime, stime (fields 14 and 15)
  return (ticks * 1000) / 100; // USER_HZ is 100 on Linux
}

/** The command name of one /proc `stat` line: between the first `(` and the last `)`. */
export function statName(stat: string): string {
  return stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"));
}

/** CPU time (user + system, ms) a process has used so far, from /proc/PID/stat. */
export function cpuMs(pid: number): number | null {
  const f = `/proc/${pid}/stat`;
  if (!existsSync(f)) return null;
  return statCpuMs(readFileSync(f, "utf8"));
}

export interface ThreadCpu {
  main: number;
  httpClient: number;
  other: number;
}

/**
 * Sorts the `stat` lines of a process's threads (thread id → line): its main (JavaScript)
 * thread is the one whose id is the process's, Bun's "HTTP Client" thread (where `fetch` does
 * its I/O) is named so, and the rest (garbage collector, JIT, workers) are summed.
 */
export function splitThreadCpu(pid: number, stats: Iterable<[tid: string, stat: string]>): ThreadCpu {
  const out = { main: 0, httpClient: 0, other: 0 };
  for (const [tid, stat] of stats) {
    const ms = statCpuMs(stat);
    if (tid === String(pid)) out.main += ms;
    else if (statName(stat) === "HTTP Client") out.httpClient += ms;
    else out.other += ms;
  }
  return out;
}

/** The `stat` line of each thread of a process still running (thread id → line). */
export function threadStats(pid: number): Map<string, string> {
  const out = new Map<string, string>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      out.set(tid, readFileSync(`/proc/${pid}/task/${tid}/stat`, "utf8"));
    } catch {} // the thread exited between the listing and the read
  }
  return out;
}

/** CPU ms per thread of a process so far (see splitThreadCpu). */
export function threadCpuMs(pid: number): ThreadCpu {
  return splitThreadCpu(pid, threadStats(pid));
}

/** A process and every process below it (children, their children…), from /proc's parent ids. */
export function processTree(pid: number): number[] {
  const parent = new Map<number, number[]>();
  for (const d of readdirSync("/proc")) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = readFileSync(`/proc/${d}/stat`, "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      parent.set(ppid, [...(parent.get(ppid) ?? []), Number(d)]);
    } catch {} // it exited between the listing and the read
  }
  const out = [pid];
  for (let i = 0; i < out.length; i++) out.push(...(parent.get(out[i]!) ?? []));
  return out;
}

/**
 * CPU ms so far of a process tree (a supervisor and its gateway processes), and of their main
 * (JavaScript) threads summed. A process that exits in between drops out of the sum, so the
 * tree is read fresh each time and a measured window must see no process die.
 */
export function treeCpuMs(pid: number): { total: number; main: number } {
  let total = 0;
  let main = 0;
  for (const p of processTree(pid)) {
    try {
      // The process's own counters include its threads that have exited; the main thread's are its
      // own. Main first: both only grow, so a tick landing between the two reads cannot put main above total.
      const m = threadCpuMs(p).main;
      const t = cpuMs(p);
      if (t === null) continue; // it exited between the two reads
      main += m;
      total += t;
    } catch {} // it exited between the listing and the read
  }
  return { total, main };
}

/** CPU ms of every process whose command is `postgres` (server, backends, background workers). */
export function postgresMs(): number {
  let total = 0;
  for (const d of readdirSync("/proc")) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = readFileSync(`/proc/${d}/stat`, "utf8");
      if (statName(stat) === "postgres") total += statCpuMs(stat);
    } catch {}
  }
  return total;
}

export async function freePort(): Promise<number> {
  const s = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response() });
  const port = s.port!;
  await s.stop(true);
  return port;
}
