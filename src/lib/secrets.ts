/** Secret generation and hashing for API and management keys. */
import { randomBytes } from "node:crypto";

const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

/** A random base62 string of `len` characters (rejection sampling keeps it unbiased). */
export function randomToken(len: number): string {
  let out = "";
  while (out.length < len) {
    for (const b of randomBytes(len * 2)) {
      if (b < 248) out += ALPHABET[b % 62];
      if (out.length === len) break;
    }
  }
  return out;
}

/** Hex SHA-256 of a string: one native call (node:crypto's Hash object cost more on every API call). */
export function sha256Hex(s: string): string {
  return Bun.SHA256.hash(s, "hex");
}
