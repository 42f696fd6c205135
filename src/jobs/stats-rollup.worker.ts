/**
 * Worker entry of the stats rollup (PostgreSQL): its own connection, the core use-case on a
 * timer, errors reported to the main thread (which owns logging).
 */
import { openDatabase, type Database } from "../db/client";
import { RollupRepo } from "../db/repos/rollups";
import { runRollup } from "../core/stats/rollup-state";
import type { RollupWorkerIn, RollupWorkerOut } from "./stats-rollup";

declare const self: Worker;

const post = (m: RollupWorkerOut) => self.postMessage(m);
let stopping = false;
let wake = () => {};

self.onmessage = (e: MessageEvent<RollupWorkerIn>) => {
  if (e.data.type === "start") void loop(e.data);
  else {
    stopping = true;
    wake();
  }
};

async function loop(o: Extract<RollupWorkerIn, { type: "start" }>): Promise<void> {
  let db: Database | null = null;
  try {
    db = await openDatabase({ url: o.url, max: 1 });
    const repo = new RollupRepo(db, { accountCap: o.accountCap, minAccountAgeHours: o.minAccountAgeHours });
    while (!stopping) {
      try {
        const r = await runRollup(repo, { limit: o.batchSize, wait: false });
        if (r.folded) post({ type: "folded", events: r.folded });
      } catch (e) {
        post({ type: "error", message: e instanceof Error ? e.message : String(e) });
      }
      if (stopping) break;
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, o.intervalMs);
        wake = () => {
          clearTimeout(t);
          resolve();
        };
      });
    }
  } catch (e) {
    post({ type: "error", message: e instanceof Error ? e.message : String(e) });
  } finally {
    await db?.close().catch(() => {});
    post({ type: "stopped" });
  }
}
