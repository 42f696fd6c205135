/**
 * E-mail addresses, read outwards from an `@` so that text without `@` costs nothing here
 * and no regex ever backtracks over a long word that turns out not to be an address.
 */

/** RFC 5321 limits: 64 for the local part, 253 for the domain. */
const MAX_LOCAL = 64;
const MAX_DOMAIN = 253;

/** Unquoted local-part characters we accept (a common subset of RFC 5322 atext plus dots). */
function isLocalChar(c: number): boolean {
  return (
    (c >= 48 && c <= 57) ||
    (c >= 65 && c <= 90) ||
    (c >= 97 && c <= 122) ||
    c === 46 ||
    c === 95 ||
    c === 37 ||
    c === 43 ||
    c === 45 // . _ % + -
  );
}

function isDomainChar(c: number): boolean {
  return (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 46 || c === 45;
}

function isLetter(c: number): boolean {
  return (c >= 65 && c <= 90) || (c >= 97 && c <= 122);
}

/**
 * The address around the `@` at `at`, as [start, end), or null. `floor` is where the
 * previous finding ended: the local part never reaches back over it.
 */
export function matchEmail(text: string, at: number, floor: number): [number, number] | null {
  let s = at;
  while (s > floor && isLocalChar(text.charCodeAt(s - 1))) {
    if (at - s === MAX_LOCAL) return null; // a longer token than any local part
    s--;
  }
  if (s > floor && text.charCodeAt(s - 1) === 64) return null; // "a@b.com@c.com": not an address
  while (s < at && text.charCodeAt(s) === 46) s++; // a local part does not start with "."
  if (s === at || text.charCodeAt(at - 1) === 46) return null;

  let e = at + 1;
  while (e < text.length && isDomainChar(text.charCodeAt(e))) {
    if (e - at > MAX_DOMAIN) return null;
    e++;
  }
  // Sentence punctuation after the address ("write to a@b.com.") is not part of it.
  while (e > at + 1 && (text.charCodeAt(e - 1) === 46 || text.charCodeAt(e - 1) === 45)) e--;
  if (e < text.length && text.charCodeAt(e) === 64) return null; // "a@b.c@d": not an address
  return isDomain(text, at + 1, e) ? [s, e] : null;
}

/** At least two labels of 1–63 characters, none starting or ending with "-", a letter-only TLD of 2+. */
function isDomain(text: string, s: number, e: number): boolean {
  let labelStart = s;
  let labels = 0;
  for (let i = s; i <= e; i++) {
    if (i < e && text.charCodeAt(i) !== 46) continue;
    const len = i - labelStart;
    if (len < 1 || len > 63) return false;
    if (text.charCodeAt(labelStart) === 45 || text.charCodeAt(i - 1) === 45) return false;
    labels++;
    if (i === e) {
      if (len < 2) return false;
      for (let j = labelStart; j < e; j++) if (!isLetter(text.charCodeAt(j))) return false;
    }
    labelStart = i + 1;
  }
  return labels >= 2;
}
