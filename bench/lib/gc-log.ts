/**
 * JavaScriptCore's GC log (BUN_JSC_logGC=1 on stderr), read back as numbers, heap by heap. A collection
 * opens with `[GC<…>: START M 8420kb => EdenCollection, … p=1.16ms (max …)…]`; one that runs
 * alongside the program goes on in lines `[GC<…>: M … p=0.04ms …]`, and its last line carries
 * the heap after it, `… => 6384kb, p=2.29ms (max …), cycle … END]`. Every `p=` is one pause of
 * the JavaScript thread. Between two offsets of the file this tells how often the gateway
 * collected and how long each pause was, exactly; and at most how much was allocated. The size
 * a START line prints is the heap's capacity (its blocks, free cells included, plus extra
 * memory), the one an END line prints the bytes found live: "start minus the last end" is the
 * allocation plus the free space the heap kept. At idle, where timer-driven collections follow
 * one another with nothing allocated, it reads a few MB per collection; at saturation it read
 * 44–50 KiB per call where the capacity with the collector off grew by 38 (bench/alloc.ts, the
 * figure the report uses when the run has it).
 */
import { closeSync, openSync, readSync, statSync } from "node:fs";

export interface GcWindow {
  /** The figures below are the main heap's: the one that allocated most in the window (see `heaps`). */
  collections: number;
  full: number;
  /** Each pause of the heap's thread, ms, in order (a collection may pause it several times). */
  pausesMs: number[];
  /** At most the KiB allocated in the window: each collection's start size minus the last one's end (see above). */
  allocatedKiB: number;
  /**
   * Every heap that collected in the window. Each Bun worker has a heap of its own (the gateway's
   * video pollers and stats worker), logged as `[GC<address>: …]` lines interleaved with the main
   * heap's: growth is only meaningful from one collection of a heap to the next of the same heap,
   * and a worker's pause holds its own thread, not the one answering calls.
   */
  heaps: number;
  /** KiB allocated by every heap together. */
  allHeapsKiB: number;
}

interface Heap {
  collections: number;
  full: number;
  pausesMs: number[];
  allocatedKiB: number;
  after: number | null;
}

const HEAP = /^\[GC<(\w+)>/;
const START = /START M (\d+)kb => (\w+)Collection/;
const PAUSE = /\bp=([\d.]+)ms/;
const AFTER = /=> (\d+)kb, p=/;

/** The file's size now: an offset to read from later. */
export function gcLogOffset(path: string): number {
  return statSync(path).size;
}

/** The collections logged in `text` (whole lines of the log). */
export function parseGcLog(text: string): GcWindow {
  const heaps = new Map<string, Heap>();
  for (const line of text.split("\n")) {
    const id = HEAP.exec(line)?.[1];
    if (!id) continue;
    let h = heaps.get(id);
    if (!h) heaps.set(id, (h = { collections: 0, full: 0, pausesMs: [], allocatedKiB: 0, after: null }));
    const start = START.exec(line);
    if (start) {
      h.collections++;
      if (start[2] === "Full") h.full++;
      if (h.after !== null) h.allocatedKiB += Math.max(0, Number(start[1]) - h.after);
    }
    const pause = PAUSE.exec(line);
    if (pause) h.pausesMs.push(Number(pause[1]));
    const after = AFTER.exec(line);
    if (after) h.after = Number(after[1]);
  }
  const all = [...heaps.values()];
  // Under load the heap answering calls allocates far more than any worker's; ties go to the first seen.
  const main = all.reduce<Heap | null>((best, h) => (!best || h.allocatedKiB > best.allocatedKiB ? h : best), null);
  return {
    collections: main?.collections ?? 0,
    full: main?.full ?? 0,
    pausesMs: main?.pausesMs ?? [],
    allocatedKiB: main?.allocatedKiB ?? 0,
    heaps: all.length,
    allHeapsKiB: all.reduce((sum, h) => sum + h.allocatedKiB, 0),
  };
}

/** The collections logged between byte offsets `from` and `to` of `path`. */
export function readGcWindow(path: string, from: number, to: number): GcWindow {
  const fd = openSync(path, "r");
  const buf = Buffer.alloc(Math.max(0, to - from));
  try {
    readSync(fd, buf, 0, buf.length, from);
  } finally {
    closeSync(fd);
  }
  return parseGcLog(buf.toString("utf8"));
}
