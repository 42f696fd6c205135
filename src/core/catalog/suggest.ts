/**
 * "Did you mean" for unknown model ids (docs/decisions.md #9): up to 5 close ids by edit distance.
 * Runs only on the error path, but any key holder can take that path as often as it likes, so the
 * scan over the catalog allocates nothing per comparison and skips the ids whose length alone
 * rules them out: a 200-character id used to cost about 2.5 ms of the event loop per call.
 */
import type { CatalogModel, CatalogSnapshot, Modality } from "./types";

export const MAX_SUGGESTIONS = 5;

// The two rows of the distance table, shared by every call (it never yields) and grown on demand.
let rowA = new Int32Array(64);
let rowB = new Int32Array(64);

/** Levenshtein distance (insert, delete, substitute each cost 1). */
export function editDistance(a: string, b: string): number {
  if (a === b) return 0;
  if (a.length === 0) return b.length;
  if (b.length === 0) return a.length;
  if (rowA.length <= b.length) {
    rowA = new Int32Array(b.length * 2 + 1);
    rowB = new Int32Array(b.length * 2 + 1);
  }
  let prev = rowA;
  let cur = rowB;
  for (let j = 0; j <= b.length; j++) prev[j] = j;
  for (let i = 1; i <= a.length; i++) {
    cur[0] = i;
    const ca = a.charCodeAt(i - 1);
    for (let j = 1; j <= b.length; j++) {
      const cost = ca === b.charCodeAt(j - 1) ? 0 : 1;
      cur[j] = Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + cost);
    }
    const t = prev;
    prev = cur;
    cur = t;
  }
  return prev[b.length]!;
}

export interface SuggestOptions {
  /** Only models of this modality (parents count as text). */
  modality?: Modality;
  limit?: number;
}

/**
 * The closest callable ids (active leaves and routing parents) to `query`, nearest first.
 * A candidate qualifies when its distance is small for its length, or when it contains the
 * query (`claude` → `claude-sonnet-4-5`). The vendor form is compared too (`openai/gpt4o`).
 */
export function suggestModels(snapshot: CatalogSnapshot, query: string, options: SuggestOptions = {}): string[] {
  const q = query.trim().toLowerCase();
  if (q.length === 0) return [];
  const tail = q.includes("/") ? q.slice(q.lastIndexOf("/") + 1) : null;
  const scored: { id: string; score: number; distance: number }[] = [];
  for (const m of snapshot.models) {
    if (!isCallable(m) || (options.modality && m.modality !== options.modality)) continue;
    const id = m.id.toLowerCase();
    const vendor = m.vendorId.toLowerCase();
    const needle = tail ?? q;
    const contains = needle.length >= 3 && (id.includes(needle) || needle.includes(id));
    const limit = Math.max(2, Math.floor(Math.max(needle.length, id.length) * 0.4));
    // A distance is at least the difference of the lengths: past the limit, the table is not needed.
    const atLeast = Math.min(
      Math.abs(q.length - id.length),
      Math.abs(q.length - vendor.length),
      tail ? Math.abs(tail.length - id.length) : Infinity,
    );
    if (atLeast > limit && !contains) continue;
    const distance = Math.min(editDistance(q, id), editDistance(q, vendor), tail ? editDistance(tail, id) : Infinity);
    if (distance <= limit || contains)
      scored.push({ id: m.id, score: contains ? Math.min(distance, 1) : distance, distance });
  }
  scored.sort((a, b) => a.score - b.score || a.distance - b.distance || a.id.localeCompare(b.id));
  return scored.slice(0, options.limit ?? MAX_SUGGESTIONS).map((s) => s.id);
}

function isCallable(m: CatalogModel): boolean {
  return m.active && (m.kind === "leaf" || m.kind === "parent");
}
