/**
 * Number-shaped PII: resident registration numbers, payment cards, Korean and international
 * phone numbers, Korean passports. Each matcher looks at the digit groups read at one
 * position and either claims a span or declines; the order in {@link matchDigits} settles
 * the only real overlap (a bare 13-digit run that is both a plausible RRN and Luhn-valid is
 * an RRN: 13-digit cards are all but extinct).
 */
import { digitCount, endsClean, isDigit, readGroups, sep, startsClean, type DigitGroups } from "./groups";
import { isKoreanAreaCode, isKoreanMobilePrefix, isPlausibleRrn, passesLuhn } from "./validate";

export type NumberKind = "PHONE" | "RRN" | "CARD" | "PASSPORT";
export type NumberMatch = { kind: NumberKind; start: number; end: number };

const SPACE = sep(" ");
const HYPHEN = sep("-");
const DOT = sep(".");
const CLOSE = sep(")");
const CLOSE_SPACE = sep(")", " ");
const CLOSE_HYPHEN = sep(")", "-");

/** A finding that starts with the digit at `at`. */
export function matchDigits(text: string, at: number): NumberMatch | null {
  if (!startsClean(text, at)) return null;
  const g = readGroups(text, at);
  if (!g) return null;
  // "(02) 123-4567": the parenthesis belongs to the phone number.
  const paren = at > 0 && text.charCodeAt(at - 1) === 40;
  return matchRrn(text, g) ?? matchCard(text, g) ?? matchKoreanPhone(text, g, paren);
}

/** YYMMDD-NNNNNNN, or exactly 13 digits with no separator. */
function matchRrn(text: string, g: DigitGroups): NumberMatch | null {
  const s = g.starts[0]!;
  const len0 = g.ends[0]! - s;
  let end: number;
  if (len0 === 6 && g.count > 1 && g.seps[1] === HYPHEN && g.ends[1]! - g.starts[1]! === 7) end = g.ends[1]!;
  else if (len0 === 13) end = g.ends[0]!;
  else return null;
  const seventh = text.charCodeAt(end - 7) - 48;
  if (!isPlausibleRrn(text.slice(s, s + 6), seventh) || !endsClean(text, end)) return null;
  return { kind: "RRN", start: s, end };
}

/**
 * 13–19 digits, Luhn-valid, either unbroken or as a 4-digit group followed by groups of 3–6
 * joined by one repeated separator (space or hyphen): 4-4-4-4, 4-4-4-4-3, Amex 4-6-5,
 * Diners 4-6-4. The first digit must be a payment-network one (2–6, or 9 for Korean domestic
 * cards): this keeps 13-digit millisecond timestamps (they start with 1) out.
 */
function matchCard(text: string, g: DigitGroups): NumberMatch | null {
  const s = g.starts[0]!;
  const first = text.charCodeAt(s);
  if (first < 50 || first === 55 || first === 56) return null; // 0, 1, 7, 8
  const len0 = g.ends[0]! - s;
  if (len0 >= 13 && len0 <= 19) {
    const end = g.ends[0]!;
    return endsClean(text, end) && passesLuhn(text.slice(s, end)) ? { kind: "CARD", start: s, end } : null;
  }
  const joint = g.seps[1];
  if (len0 !== 4 || g.count < 3 || (joint !== SPACE && joint !== HYPHEN)) return null;
  // The longest prefix of groups that forms a valid card wins ("… 1111 2024" stops early).
  let k = 1;
  while (
    k < g.count &&
    k < 5 &&
    g.seps[k] === joint &&
    g.ends[k]! - g.starts[k]! >= 3 &&
    g.ends[k]! - g.starts[k]! <= 6
  )
    k++;
  for (; k >= 3; k--) {
    const n = digitCount(g, k);
    const end = g.ends[k - 1]!;
    if (n >= 13 && n <= 19 && endsClean(text, end) && passesLuhn(text.slice(s, end)))
      return { kind: "CARD", start: s, end };
  }
  return null;
}

function isPhoneSep(s: number): boolean {
  return s === HYPHEN || s === SPACE || s === DOT;
}

/** ")", ") " or ")-" after a parenthesised area code. */
function isAreaCloseSep(s: number): boolean {
  return s === CLOSE || s === CLOSE_SPACE || s === CLOSE_HYPHEN;
}

/**
 * Korean numbers: mobile as 010-1234-5678 / 010 1234 5678 / 010.1234.5678 / 01012345678
 * (legacy 011/016–019 with 7 or 8 digits after the prefix), landlines and 070/080/050x as
 * area-exchange-line with separators ("02-123-4567", "(031) 123-4567"). An unbroken landline
 * ("021234567") is not claimed: too easily an order or account number.
 */
function matchKoreanPhone(text: string, g: DigitGroups, paren: boolean): NumberMatch | null {
  const s = g.starts[0]!;
  const first = text.slice(s, g.ends[0]!);
  if ((first.length === 10 || first.length === 11) && isKoreanMobilePrefix(first.slice(0, 3))) {
    if (first.startsWith("010") && first.length !== 11) return null;
    return endsClean(text, g.ends[0]!) ? { kind: "PHONE", start: s, end: g.ends[0]! } : null;
  }
  if (g.count < 3) return null;
  if (!isKoreanMobilePrefix(first) && !isKoreanAreaCode(first)) return null;
  const mid = g.ends[1]! - g.starts[1]!;
  const last = g.ends[2]! - g.starts[2]!;
  if (mid < 3 || mid > 4 || last !== 4 || !isPhoneSep(g.seps[2]!)) return null;
  // "(02) 123-4567" takes its parenthesis along; in "(02-123-4567)" it is just a bracket.
  const areaParen = paren && isAreaCloseSep(g.seps[1]!);
  if (!areaParen && !isPhoneSep(g.seps[1]!)) return null;
  const start = areaParen ? s - 1 : s;
  if (areaParen && !startsClean(text, start)) return null;
  return endsClean(text, g.ends[2]!) ? { kind: "PHONE", start, end: g.ends[2]! } : null;
}

/**
 * "+" then 8–15 digits (E.164's maximum) in groups: "+1 415 555 0100", "+44 20 7946 0958",
 * "+82 10-1234-5678", "+1 (415) 555-0100", "+82 (0)10 1234 5678". Groups after the second
 * need 2+ digits, so a stray count after the number ("… 0100 2 times") is left out.
 */
export function matchInternationalPhone(text: string, at: number): NumberMatch | null {
  const c = text.charCodeAt(at + 1);
  if (c < 49 || c > 57 || !startsClean(text, at)) return null; // country codes do not start with 0
  const g = readGroups(text, at + 1);
  if (!g) return null;
  let k = 1;
  while (k < g.count && (k < 2 || g.ends[k]! - g.starts[k]! >= 2)) k++;
  for (; k >= 1; k--) {
    const n = digitCount(g, k);
    if (n > 15) continue;
    if (n < 8) return null;
    const end = g.ends[k - 1]!;
    if (parensBalanced(g, k) && endsClean(text, end)) return { kind: "PHONE", start: at, end };
  }
  return null;
}

/** Parentheses among the first k separators open before they close and end closed. */
function parensBalanced(g: DigitGroups, k: number): boolean {
  let open = false;
  for (let i = 1; i < k; i++) {
    const s = g.seps[i]!;
    if ((s & 0xff) === 41 /* ) */) {
      if (!open) return false;
      open = false;
    }
    if ((s & 0xff) === 40 || s >> 8 === 40 /* ( */) {
      if (open) return false;
      open = true;
    }
  }
  return !open;
}

/**
 * Korean passports: a letter (M regular, S single, R travel certificate, O official,
 * D diplomatic) then 8 digits ("M12345678"), or since 2021 3 digits, a letter and 4 digits
 * ("M123A4567"). The candidate scan already matched the shape at `at`.
 */
export function matchPassport(text: string, at: number): NumberMatch | null {
  const end = at + 9;
  if (end < text.length && isDigit(text.charCodeAt(end))) return null;
  return startsClean(text, at) && endsClean(text, end) ? { kind: "PASSPORT", start: at, end } : null;
}
