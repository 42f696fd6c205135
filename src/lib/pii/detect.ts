/**
 * Finding PII in a text with one linear scan.
 *
 * A single global regex finds *candidates*: an `@`, a `+` before a digit, nine digits joined
 * by at most single separators (every Korean phone, RRN and card has at least nine), or the
 * shape of a passport number; number candidates only where a finding may start (not glued to
 * a word, see `startsClean`). Text without any of these (most prompts) costs that one scan and
 * nothing else. At each candidate a bounded matcher claims a span or declines, and the scan
 * resumes after the span or after the candidate's digit run, so no character is examined more
 * than a constant number of times.
 */
import { isDigit } from "./groups";
import { matchEmail } from "./match-email";
import { matchDigits, matchInternationalPhone, matchPassport, type NumberKind } from "./match-numbers";

export type PiiKind = "EMAIL" | NumberKind;

/** One finding: `text.slice(start, end)` is the value. */
export interface PiiSpan {
  kind: PiiKind;
  start: number;
  end: number;
}

/** Not glued to a preceding word, `+`, or hyphenated/dotted token (mirrors `startsClean`). */
const CLEAN_START = String.raw`(?<![\w+]|\w[-.])`;
/**
 * The candidate scan. The nine-digit part is unrolled on purpose: JavaScriptCore runs a
 * quantified group like `(?:\)?[-. ]?\d){8}` several times slower than the same pattern
 * written out (measured with bench/pii.ts on number-dense text).
 */
const CANDIDATE = new RegExp(
  String.raw`@|${CLEAN_START}(?:\+[1-9]|\d${String.raw`\)?[-. ]?\d`.repeat(8)}|[MSROD]\d{3}[A-Z\d]\d{4})`,
  "g",
);
const NONE: readonly PiiSpan[] = Object.freeze([]);

/** Findings in `text`, in order and non-overlapping. */
export function findPii(text: string): readonly PiiSpan[] {
  const re = CANDIDATE;
  re.lastIndex = 0;
  let m = re.exec(text);
  if (m === null) return NONE;
  const out: PiiSpan[] = [];
  let floor = 0;
  while (m !== null) {
    const at = m.index;
    const span = matchAt(text, at, floor);
    if (span) {
      out.push(span);
      floor = span.end;
      re.lastIndex = span.end;
    } else {
      re.lastIndex = skipCandidate(text, at);
    }
    m = re.exec(text);
  }
  return out;
}

function matchAt(text: string, at: number, floor: number): PiiSpan | null {
  const c = text.charCodeAt(at);
  if (c === 64) {
    const r = matchEmail(text, at, floor);
    return r ? { kind: "EMAIL", start: r[0], end: r[1] } : null;
  }
  if (c === 43) return matchInternationalPhone(text, at);
  if (isDigit(c)) return matchDigits(text, at);
  return matchPassport(text, at);
}

/**
 * Where to look next after a declined candidate. Inside a digit run no position can start a
 * finding (the digit before it glues it), so the whole run is skipped: a 10 KB hash is read
 * once, not once per digit.
 */
function skipCandidate(text: string, at: number): number {
  let i = at + 1;
  if (isDigit(text.charCodeAt(at))) while (i < text.length && isDigit(text.charCodeAt(i))) i++;
  return i;
}
