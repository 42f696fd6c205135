/**
 * "Did you mean" for unknown model ids (docs/decisions.md #9): up to 5 close ids by edit distance.
 * Runs only on the error path, so a linear scan over the catalog is fine.
 */
import type { CatalogModel, CatalogSnapshot, Modality } from "./types";

export const MAX_SUGGESTIONS = 5;

/** Levenshtein distance (insert, delete, substitute each cost 1). */
export function editDistance(a: string, b: string): number {
  if (a === b) return 0;
  if (a.length === 0) return b.length;
  if (b.length === 0) return a.length;
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  let cur = new Array<number>(b.length + 1);
  for (let i = 1; i <= a.length; i++) {
    cur[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a.charCodeAt(i - 1) === b.charCodeAt(j - 1) ? 0 : 1;
      cur[j] = Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + cost);
    }
    [prev, cur] = [cur, prev];
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
    const distance = Math.min(
      editDistance(q, id),
      editDistance(q, m.vendorId.toLowerCase()),
      tail ? editDistance(tail, id) : Infinity,
    );
    const needle = tail ?? q;
    const contains = needle.length >= 3 && (id.includes(needle) || needle.includes(id));
    const limit = Math.max(2, Math.floor(Math.max(needle.length, id.length) * 0.4));
    if (distance <= limit || contains)
      scored.push({ id: m.id, score: contains ? Math.min(distance, 1) : distance, distance });
  }
  scored.sort((a, b) => a.score - b.score || a.distance - b.distance || a.id.localeCompare(b.id));
  return scored.slice(0, options.limit ?? MAX_SUGGESTIONS).map((s) => s.id);
}

function isCallable(m: CatalogModel): boolean {
  return m.active && (m.kind === "leaf" || m.kind === "parent");
}
