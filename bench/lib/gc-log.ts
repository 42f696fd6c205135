/**
 * JavaScriptCore's GC log (BUN_JSC_logGC=1 on stderr), read back as numbers: one line per
 * collection, `[GC<…>: START M 45781kb => EdenCollection, … => 21748kb, p=3.78ms (max …), cycle …]`
 * — the heap before, the kind, the heap after, and `p=`, how long the collector held the
 * JavaScript thread. Between two offsets of the file, it tells how often the gateway collected,
 * how long each pause was, and how much was allocated (the heap's growth between collections).
 */
import { closeSync, openSync, readSync, statSync } from "node:fs";

export interface GcWindow {
  collections: number;
  full: number;
  /** Pause of each collection, ms, in order. */
  pausesMs: number[];
  /** KiB allocated in the window, summed over the heap's growth from one collection to the next. */
  allocatedKiB: number;
}

const LINE = /START M (\d+)kb => (\w+)Collection.*=> (\d+)kb, p=([\d.]+)ms/;

/** The file's size now: an offset to read from later. */
export function gcLogOffset(path: string): number {
  return statSync(path).size;
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
  const w: GcWindow = { collections: 0, full: 0, pausesMs: [], allocatedKiB: 0 };
  let heapAfter: number | null = null;
  for (const line of buf.toString("utf8").split("\n")) {
    const m = LINE.exec(line);
    if (!m) continue;
    const [before, kind, after, pause] = [Number(m[1]), m[2], Number(m[3]), Number(m[4])];
    w.collections++;
    if (kind === "Full") w.full++;
    w.pausesMs.push(pause);
    if (heapAfter !== null) w.allocatedKiB += Math.max(0, before - heapAfter);
    heapAfter = after;
  }
  return w;
}
