/**
 * Preloaded (`bun --preload`) into a target that runs with the collector off: on SIGUSR2 it
 * appends the heap's capacity, in bytes, as one line to HEAP_PROBE_OUT. See lib/heap-probe.ts.
 */
import { heapStats } from "bun:jsc";
import { appendFileSync } from "node:fs";

const out = process.env.HEAP_PROBE_OUT;
if (out) process.on("SIGUSR2", () => appendFileSync(out, `${heapStats().heapCapacity}\n`));
