/**
 * Preloaded (`bun --preload`) into a target that runs with the collector off: on SIGUSR2 it
 * appends one JSON line to HEAP_PROBE_OUT, the heap's capacity in bytes and how many objects of
 * each kind it holds (with nothing collected, every object ever made). See lib/heap-probe.ts.
 */
import { heapStats } from "bun:jsc";
import { appendFileSync } from "node:fs";

const out = process.env.HEAP_PROBE_OUT;
if (out)
  process.on("SIGUSR2", () => {
    const s = heapStats();
    appendFileSync(out, `${JSON.stringify({ capacity: s.heapCapacity, types: s.objectTypeCounts })}\n`);
  });
