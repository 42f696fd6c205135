/**
 * How the rollup job moves through usage events without ever folding one twice or missing
 * one that committed late.
 *
 * Events are read by id above a watermark. An id is taken from the sequence when the insert
 * starts but becomes visible only at commit, so a batch can see id 12 while id 11 is still in
 * flight. Such missing ids below the new watermark become `holes`: every later batch looks
 * them up again and folds the ones that appeared. A hole that stays missing for `holeTtlMs`
 * is a rolled-back insert or a sequence value burnt by `ON CONFLICT DO NOTHING`, and is
 * dropped. The number of holes kept is bounded (the newest ids win), so a sequence jump
 * cannot make the state grow without limit.
 */

export interface Hole {
  id: number;
  /** When the hole was first seen (epoch ms). */
  seen: number;
}

export interface RollupState {
  watermark: number;
  holes: Hole[];
}

export interface BatchScan {
  /** Highest id read in this batch, or null when no event above the watermark was visible. */
  upper: number | null;
  /** Ids in (watermark, upper] that were not visible. */
  missing: number[];
  /** Earlier holes that are visible now (they are folded in this batch). */
  found: number[];
}

export const HOLE_TTL_MS = 10 * 60_000;
export const MAX_HOLES = 10_000;

export function nextRollupState(
  s: RollupState,
  scan: BatchScan,
  now: number,
  holeTtlMs = HOLE_TTL_MS,
  maxHoles = MAX_HOLES,
): RollupState {
  const found = new Set(scan.found);
  const kept = s.holes.filter((h) => !found.has(h.id) && now - h.seen < holeTtlMs);
  const known = new Set(kept.map((h) => h.id));
  for (const id of scan.missing) if (id > s.watermark && !known.has(id)) kept.push({ id, seen: now });
  kept.sort((a, b) => a.id - b.id);
  const holes = kept.length > maxHoles ? kept.slice(kept.length - maxHoles) : kept;
  return { watermark: scan.upper === null ? s.watermark : Math.max(s.watermark, scan.upper), holes };
}

/** Holes as stored (a compact JSON array of [id, seen] pairs). */
export function encodeHoles(h: Hole[]): [number, number][] {
  return h.map((x) => [x.id, x.seen]);
}

export function decodeHoles(v: unknown): Hole[] {
  if (!Array.isArray(v)) return [];
  return v.flatMap((p) =>
    Array.isArray(p) && Number.isSafeInteger(p[0]) && Number.isFinite(p[1])
      ? [{ id: p[0] as number, seen: p[1] as number }]
      : [],
  );
}

/** Outcome of one batch, for logs and tests. */
export interface BatchResult {
  /** False when another runner held the lock (nothing was done). */
  ran: boolean;
  /** Events folded, holes included. */
  folded: number;
  /** True when the batch reached the newest visible event. */
  caughtUp: boolean;
  watermark: number;
  holes: number;
}

export interface RollupStore {
  /** Folds at most `limit` events above the watermark (plus any holes that appeared). */
  runBatch(o: { limit: number; wait: boolean }): Promise<BatchResult>;
}

/**
 * Runs batches until the rollups have caught up with the visible events (or `maxBatches`).
 * With `wait: false` it returns at once when another runner holds the lock.
 */
export async function runRollup(
  store: RollupStore,
  o: { limit: number; wait: boolean; maxBatches?: number },
): Promise<{ folded: number; batches: number; ran: boolean }> {
  let folded = 0;
  let batches = 0;
  const max = o.maxBatches ?? 1000;
  while (batches < max) {
    const r = await store.runBatch({ limit: o.limit, wait: o.wait });
    if (!r.ran) return { folded, batches, ran: batches > 0 };
    batches++;
    folded += r.folded;
    if (r.caughtUp) break;
  }
  return { folded, batches, ran: true };
}
