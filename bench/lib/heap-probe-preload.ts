/**
 * Preloaded (`bun --preload`) into a target: on SIGUSR2 it appends one JSON line to
 * HEAP_PROBE_OUT, the heap's capacity in bytes, how many objects of each kind it holds and the
 * process's RSS. With the collector off (lib/heap-probe.ts, collectorOff) nothing was ever
 * collected, so the counts are every object ever made; with HEAP_PROBE_GC=1 (gcProbe) it runs
 * a full collection first, so the RSS is what the process keeps, not garbage not yet collected.
 */
import { heapStats } from "bun:jsc";
import { appendFileSync } from "node:fs";

const out = process.env.HEAP_PROBE_OUT;
const collectFirst = process.env.HEAP_PROBE_GC === "1";
if (out)
  process.on("SIGUSR2", () => {
    if (collectFirst) Bun.gc(true);
    const s = heapStats();
    appendFileSync(
      out,
      `${JSON.stringify({ capacity: s.heapCapacity, types: s.objectTypeCounts, rss: process.memoryUsage.rss() })}\n`,
    );
  });
