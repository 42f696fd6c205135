/**
 * A deterministic stand-in for an embedding model: character trigrams of the lowercased,
 * punctuation-free text, hashed (FNV-1a) into a fixed number of buckets. Texts sharing most
 * trigrams land close in cosine; unrelated texts land far apart.
 */
export function fakeEmbed(dims = 256): (text: string) => Promise<number[]> {
  return async (text) => trigramVector(text, dims);
}

export function trigramVector(text: string, dims = 256): number[] {
  const v = new Array<number>(dims).fill(0);
  const t =
    " " +
    text
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s]/gu, "")
      .replace(/\s+/g, " ")
      .trim() +
    " ";
  for (let i = 0; i + 3 <= t.length; i++) {
    let h = 0x811c9dc5;
    for (let j = i; j < i + 3; j++) h = Math.imul(h ^ t.charCodeAt(j), 0x01000193) >>> 0;
    v[h % dims]! += 1;
  }
  return v;
}
