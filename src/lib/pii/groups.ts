/**
 * Reading a number as it is written in prose: digit groups joined by single separators
 * ("010-1234-5678", "4111 1111 1111 1111", "+1 (415) 555-0100"), plus the boundary rules
 * that keep a finding from being cut out of a longer token (an order id, a hash, a file name).
 * Everything here is bounded: a run of digits longer than any PII is read at most once.
 */

/** No PII has more digits than this (E.164 15, cards 19), so longer runs are not read. */
const MAX_DIGITS = 20;
/** "+82 (0)10 1234 5678" has five groups; one spare. */
const MAX_GROUPS = 6;

/**
 * The digit groups read at one position: group i spans [starts[i], ends[i]) and `seps[i]` is
 * the separator before it (see {@link sep}; seps[0] = 0).
 */
export interface DigitGroups {
  count: number;
  starts: Int32Array;
  ends: Int32Array;
  seps: Int32Array;
}

/**
 * A separator as a number: its first character code, plus the second one shifted left by 8
 * for the two-character ones. `sep(")", " ")` is ") ".
 */
export function sep(a: string, b?: string): number {
  return a.charCodeAt(0) | (b === undefined ? 0 : b.charCodeAt(0) << 8);
}

export function isDigit(c: number): boolean {
  return c >= 48 && c <= 57;
}

/** ASCII letters, digits and `_`: characters that glue a number into a larger identifier. */
function isWordChar(c: number): boolean {
  return (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95;
}

/** Length of a separator at `i` ("-", " ", ".", "(", ")", ") ", ")-", " (", "-(", ".(") followed by a digit; else 0. */
function sepLength(text: string, i: number): number {
  const c = text.charCodeAt(i);
  let len: number;
  if (c === 41 /* ) */) {
    const n = text.charCodeAt(i + 1);
    len = n === 32 || n === 45 ? 2 : 1;
  } else if (c === 32 || c === 45 || c === 46) {
    len = text.charCodeAt(i + 1) === 40 /* ( */ ? 2 : 1;
  } else if (c === 40) {
    len = 1;
  } else {
    return 0;
  }
  return isDigit(text.charCodeAt(i + len)) ? len : 0;
}

/**
 * One scratch object, reused by every call: this runs at every candidate of the hot path and
 * allocating arrays each time was its largest cost in profiles. Detection is synchronous and
 * not re-entrant, so a result is always read before the next call.
 */
const scratch: DigitGroups = {
  count: 0,
  starts: new Int32Array(MAX_GROUPS),
  ends: new Int32Array(MAX_GROUPS),
  seps: new Int32Array(MAX_GROUPS),
};

/**
 * Reads digit groups from `p` (a digit). Returns null when the first group alone is longer
 * than any PII; stops before a group that would push the total past {@link MAX_DIGITS}.
 * The result is the shared scratch object: read it before calling again.
 */
export function readGroups(text: string, p: number): DigitGroups | null {
  const g = scratch;
  g.count = 0;
  let i = p;
  let total = 0;
  for (;;) {
    const s = i;
    while (i < text.length && isDigit(text.charCodeAt(i)) && i - s <= MAX_DIGITS) i++;
    if (total + (i - s) > MAX_DIGITS) return g.count === 0 ? null : g;
    total += i - s;
    g.starts[g.count] = s;
    g.ends[g.count] = i;
    g.count++;
    if (g.count === MAX_GROUPS) return g;
    const len = sepLength(text, i);
    if (len === 0) return g;
    g.seps[g.count] = len === 1 ? text.charCodeAt(i) : text.charCodeAt(i) | (text.charCodeAt(i + 1) << 8);
    i += len;
  }
}

/** Number of digits in groups [0, k). */
export function digitCount(g: DigitGroups, k: number): number {
  let n = 0;
  for (let i = 0; i < k; i++) n += g.ends[i]! - g.starts[i]!;
  return n;
}

/**
 * Whether a finding may start at `s`: not glued to a preceding word ("ID4111…", "v010…"),
 * not the tail of a hyphenated or dotted token ("ORD-2024…", "1.2.3…"), not after a `+`
 * (international numbers are read from their `+`). Non-ASCII letters are fine: Korean
 * writes "전화010-1234-5678" without a space. The candidate regex mirrors this rule.
 */
export function startsClean(text: string, s: number): boolean {
  if (s === 0) return true;
  const c = text.charCodeAt(s - 1);
  if (isWordChar(c) || c === 43 /* + */) return false;
  if ((c === 45 || c === 46) && s >= 2 && isWordChar(text.charCodeAt(s - 2))) return false;
  return true;
}

/**
 * Whether a finding may end at `e`: not followed by a word character, an `@` (then it is an
 * e-mail's local part) or a `-`/`.` that continues the token. Korean particles ("…5678로")
 * are fine, as is sentence punctuation.
 */
export function endsClean(text: string, e: number): boolean {
  if (e >= text.length) return true;
  const c = text.charCodeAt(e);
  if (isWordChar(c) || c === 64 /* @ */) return false;
  if ((c === 45 || c === 46) && e + 1 < text.length && isWordChar(text.charCodeAt(e + 1))) return false;
  return true;
}
