/**
 * What a process allocates, read from its heap's capacity with JavaScriptCore's collector off
 * (BUN_JSC_useGC=0). With no collection nothing is freed or reused: every object and every
 * buffer the program makes takes new space, and the capacity (JavaScriptCore's blocks plus the
 * extra memory buffers report) grows by exactly what was allocated, to the last block's slack.
 * The GC log cannot say as much (lib/gc-log.ts): the size it prints when a collection starts is
 * the capacity, which holds the free cells of the blocks kept after the last collection, so
 * "start minus the last collection's end" counts that slack as allocation too.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const PRELOAD = join(import.meta.dir, "heap-probe-preload.ts");

/** Bun flags and environment that run a target with the collector off and the probe loaded; `out` is its file (none: as is). */
export function collectorOff(out: string | null): { flags: string[]; env: Record<string, string> } {
  if (!out) return { flags: [], env: {} };
  writeFileSync(out, "");
  return { flags: ["--preload", PRELOAD], env: { BUN_JSC_useGC: "0", HEAP_PROBE_OUT: out } };
}

/**
 * Bun flags and environment that load the probe into a target with its collector on: each
 * reading runs a full collection first (`rss` is then what the process keeps); `out` is its
 * file (none: as is).
 */
export function gcProbe(out: string | null): { flags: string[]; env: Record<string, string> } {
  if (!out) return { flags: [], env: {} };
  writeFileSync(out, "");
  return { flags: ["--preload", PRELOAD], env: { HEAP_PROBE_GC: "1", HEAP_PROBE_OUT: out } };
}

export interface HeapReading {
  /** Bytes of heap capacity. */
  capacity: number;
  /** Objects of each JavaScriptCore kind on the heap ("Promise", "Function", "JSLexicalEnvironment"…). */
  types: Record<string, number>;
  /** Resident set size in bytes, read after the heap figures. */
  rss: number;
}

/** The heap of the probed process `pid` now: asks it with SIGUSR2 and waits for its line. */
export async function heapReading(pid: number, out: string, timeoutMs = 5000): Promise<HeapReading> {
  const lines = () => readFileSync(out, "utf8").split("\n").filter(Boolean);
  const before = lines().length;
  process.kill(pid, "SIGUSR2");
  for (const until = Date.now() + timeoutMs; Date.now() < until; ) {
    await Bun.sleep(20);
    const now = lines();
    if (now.length > before) return JSON.parse(now[now.length - 1]!) as HeapReading;
  }
  throw new Error(`process ${pid} did not answer the heap probe within ${timeoutMs} ms (is it preloaded?)`);
}

/** The heap capacity (bytes) of the probed process `pid` now. */
export async function heapCapacity(pid: number, out: string, timeoutMs = 5000): Promise<number> {
  return (await heapReading(pid, out, timeoutMs)).capacity;
}

/** Objects of each kind made per call between two readings, the `top` most numerous first. */
export function typesPerCall(before: HeapReading, after: HeapReading, calls: number, top = 20): [string, number][] {
  return Object.entries(after.types)
    .map(([k, n]): [string, number] => [k, (n - (before.types[k] ?? 0)) / calls])
    .filter(([, n]) => n >= 0.05)
    .sort((a, b) => b[1] - a[1])
    .slice(0, top);
}
