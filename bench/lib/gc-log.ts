/**
 * JavaScriptCore's GC log (BUN_JSC_logGC=1 on stderr), read back as numbers. A collection
 * opens with `[GC<…>: START M 8420kb => EdenCollection, … p=1.16ms (max …)…]`; one that runs
 * alongside the program goes on in lines `[GC<…>: M … p=0.04ms …]`, and its last line carries
 * the heap after it, `… => 6384kb, p=2.29ms (max …), cycle … END]`. Every `p=` is one pause of
 * the JavaScript thread. Between two offsets of the file this tells how often the gateway
 * collected, how long each pause was, and how much was allocated (the heap's growth from the
 * end of one collection to the start of the next).
 */
import { closeSync, openSync, readSync, statSync } from "node:fs";

export interface GcWindow {
  collections: number;
  full: number;
  /** Each pause of the JavaScript thread, ms, in order (a collection may pause it several times). */
  pausesMs: number[];
  /** KiB allocated in the window, summed over the heap's growth from one collection to the next. */
  allocatedKiB: number;
}

const START = /START M (\d+)kb => (\w+)Collection/;
const PAUSE = /\bp=([\d.]+)ms/;
const AFTER = /=> (\d+)kb, p=/;

/** The file's size now: an offset to read from later. */
export function gcLogOffset(path: string): number {
  return statSync(path).size;
}

/** The collections logged in `text` (whole lines of the log). */
export function parseGcLog(text: string): GcWindow {
  const w: GcWindow = { collections: 0, full: 0, pausesMs: [], allocatedKiB: 0 };
  let heapAfter: number | null = null;
  for (const line of text.split("\n")) {
    if (!line.startsWith("[GC<")) continue;
    const start = START.exec(line);
    if (start) {
      w.collections++;
      if (start[2] === "Full") w.full++;
      if (heapAfter !== null) w.allocatedKiB += Math.max(0, Number(start[1]) - heapAfter);
    }
    const pause = PAUSE.exec(line);
    if (pause) w.pausesMs.push(Number(pause[1]));
    const after = AFTER.exec(line);
    if (after) heapAfter = Number(after[1]);
  }
  return w;
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
