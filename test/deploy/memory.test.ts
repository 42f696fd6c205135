/**
 * The default path's memory, as `npm start` runs it: a real `bun src/main.ts` in demo mode on
 * embedded PGlite, a fresh DATA_DIR and then a restart on it, each serving chat calls
 * (bench/memory.ts does the sampling). The bounds sit well above the measured figures
 * (about 290 MiB peak, 200 MiB steady) and well below what PGlite's own initdb and its
 * 128 MB buffer pool cost (a 1.1 GB peak on the first start, 310–340 MiB steady).
 */
import { describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { memoryScenario } from "../../bench/memory";

// RSS is read from /proc (Linux).
const hasProc = existsSync("/proc/self/status");

describe("memory of the default path", () => {
  test.skipIf(!hasProc)(
    "first start and restart on PGlite stay under 500 MiB peak and 300 MiB steady while serving calls",
    async () => {
      const r = await memoryScenario({ calls: 100, idleSeconds: 4 }, () => {});
      for (const [start, f] of [
        ["first start", r.first],
        ["restart", r.restart],
      ] as const) {
        expect({ start, ok: f.ok }).toEqual({ start, ok: 100 });
        expect({ start, peakUnder500: f.peakMiB < 500 }).toEqual({ start, peakUnder500: true });
        expect({ start, steadyUnder300: f.steadyMiB < 300 }).toEqual({ start, steadyUnder300: true });
      }
    },
    180_000,
  );
});
