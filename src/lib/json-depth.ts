/**
 * How deep does a JSON text nest? Answered by one pass over the bytes, without parsing and
 * without recursion, so a body nested 100,000 deep is refused before anything (the parser,
 * the validator, a converter, `JSON.stringify`) walks it recursively and runs out of stack.
 */

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_OBJECT = 0x7b;
const OPEN_ARRAY = 0x5b;
const CLOSE_OBJECT = 0x7d;
const CLOSE_ARRAY = 0x5d;

/**
 * True when `json` opens more than `max` objects and arrays inside one another. Brackets
 * inside strings do not count; the text need not be valid JSON (the parser judges that).
 */
export function jsonDepthExceeds(json: Uint8Array, max: number): boolean {
  let depth = 0;
  for (let i = 0; i < json.length; i++) {
    const c = json[i];
    if (c === QUOTE) {
      i = stringEnd(json, i + 1);
    } else if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
      if (++depth > max) return true;
    } else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) {
      depth--;
    }
  }
  return false;
}

/** Index of the quote closing a string that starts at `from` (or the end of the text). */
function stringEnd(json: Uint8Array, from: number): number {
  // indexOf is native: a long string (a base64 image) is skipped at memchr speed.
  for (let q = json.indexOf(QUOTE, from); q >= 0; q = json.indexOf(QUOTE, q + 1)) {
    let backslashes = 0;
    while (json[q - 1 - backslashes] === BACKSLASH) backslashes++;
    if (backslashes % 2 === 0) return q;
  }
  return json.length;
}
