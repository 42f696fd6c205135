/**
 * Deterministic text embeddings: hashed character trigrams ("feature hashing"), each
 * trigram adding ±1 to one of `dims` coordinates, then L2-normalized. The same text always
 * gives the same vector; texts that share many trigrams point the same way (high cosine),
 * unrelated texts are close to orthogonal. No model, no randomness, microseconds per text.
 */

export const DEFAULT_EMBEDDING_DIMS = 256;

export function embedText(text: string, dims = DEFAULT_EMBEDDING_DIMS): Float32Array {
  const v = new Float32Array(dims);
  // Case and spacing differences should not move the vector.
  const s = ` ${text.toLowerCase().replace(/\s+/g, " ").trim()} `;
  for (let i = 0; i + 3 <= s.length; i++) {
    const h = fnv1a3(s, i);
    v[h % dims]! += h & 0x80000000 ? -1 : 1;
  }
  let norm = 0;
  for (let i = 0; i < dims; i++) norm += v[i]! * v[i]!;
  if (norm === 0) {
    // Only for texts shorter than a trigram: a unit vector rather than NaNs.
    v[0] = 1;
    return v;
  }
  const scale = 1 / Math.sqrt(norm);
  for (let i = 0; i < dims; i++) v[i]! *= scale;
  return v;
}

/** FNV-1a over the three UTF-16 units at `at`, as an unsigned 32-bit integer. */
function fnv1a3(s: string, at: number): number {
  let h = 0x811c9dc5;
  for (let i = at; i < at + 3; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** OpenAI's `encoding_format: "base64"`: the float32 little-endian bytes, base64-encoded. */
export function vectorToBase64(v: Float32Array): string {
  return Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString("base64");
}
