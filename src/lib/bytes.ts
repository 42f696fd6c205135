/** Byte helpers shared by the body readers. */

/** The chunks of a body as one array (`len` = their total length); a single chunk as is. */
export function concatBytes(parts: Uint8Array[], len: number): Uint8Array {
  if (parts.length === 1) return parts[0]!;
  const all = new Uint8Array(len);
  let off = 0;
  for (const p of parts) {
    all.set(p, off);
    off += p.byteLength;
  }
  return all;
}
