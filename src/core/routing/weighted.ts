/**
 * `weighted`: weighted rendezvous (highest-random-weight) hashing. Every entry scores
 * `weight / -ln(u)`, where `u` in (0,1) is a hash of (trace id, entry key); the highest score
 * wins. The same trace id over the same entries always picks the same entry, entry i wins
 * with probability weight_i / Σ weights, and changing one entry's weight only moves traces
 * to or from that entry (the minimum possible), unlike `hash mod n` or cumulative ranges.
 * The full score order is also the fallback order, so it is sticky too.
 */

export interface WeightedEntry {
  /** Stable identity of the entry: its model string (duplicates get `#2`, `#3`, ...). */
  key: string;
  weight: number;
}

/** Entry indexes from the winner down, for `seed` (a trace id, or random text without one). */
export function rankWeighted(entries: readonly WeightedEntry[], seed: string): number[] {
  const scored = entries.map((e, i) => ({ i, s: e.weight / -Math.log(unitHash(`${seed}\u0000${e.key}`)) }));
  scored.sort((a, b) => b.s - a.s || a.i - b.i);
  return scored.map((x) => x.i);
}

/** Entry keys: the model string, with `#n` on its n-th repetition (n ≥ 2). */
export function entryKeys(models: readonly string[]): string[] {
  const seen = new Map<string, number>();
  return models.map((m) => {
    const n = (seen.get(m) ?? 0) + 1;
    seen.set(m, n);
    return n === 1 ? m : `${m}#${n}`;
  });
}

/**
 * A 53-bit string hash (cyrb53: two multiplicative 32-bit lanes mixed at the end) mapped
 * into the open interval (0,1). Good avalanche for short keys and no dependency on a
 * runtime's hash, so the mapping is the same on every instance and every version of Bun.
 */
export function unitHash(text: string): number {
  let h1 = 0xdeadbeef;
  let h2 = 0x41c6ce57;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 2654435761);
    h2 = Math.imul(h2 ^ c, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  const n = 2097152 * (h2 >>> 0) + (h1 >>> 0); // 0 ≤ n < 2^53
  return (n + 0.5) / 9007199254740992;
}
