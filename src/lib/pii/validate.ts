/**
 * Checks that turn a digit pattern into a finding. Each one exists to reject a look-alike:
 * Luhn rejects order numbers and timestamps shaped like cards, the calendar check rejects
 * 13-digit ids that are not resident registration numbers.
 */

/** Luhn mod-10 over the digits of `s` (other characters skipped). */
export function passesLuhn(s: string): boolean {
  let sum = 0;
  let double = false;
  for (let i = s.length - 1; i >= 0; i--) {
    const d = s.charCodeAt(i) - 48;
    if (d < 0 || d > 9) continue;
    let v = double ? d * 2 : d;
    if (v > 9) v -= 9;
    sum += v;
    double = !double;
  }
  return sum % 10 === 0;
}

const DAYS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

let cachedYear = 0;
let cachedUntil = 0;

/** The current year, without building a Date for every RRN-shaped number. */
function thisYear(): number {
  const now = Date.now();
  if (now >= cachedUntil) {
    cachedYear = new Date(now).getFullYear();
    cachedUntil = new Date(cachedYear + 1, 0, 1).getTime();
  }
  return cachedYear;
}

/**
 * A Korean resident registration number's date part: `yymmdd` (6 digits) plus the 7th digit,
 * which encodes the century (1,2,5,6 → 1900s; 3,4,7,8 → 2000s; 5–8 are foreign residents).
 * 9 and 0 (born in the 1800s) are not plausible for a living person and are rejected, as is
 * a birth year after the current one.
 */
export function isPlausibleRrn(yymmdd: string, seventh: number, currentYear = thisYear()): boolean {
  if (seventh < 1 || seventh > 8) return false;
  const yy = Number(yymmdd.slice(0, 2));
  const mm = Number(yymmdd.slice(2, 4));
  const dd = Number(yymmdd.slice(4, 6));
  const year = (seventh === 3 || seventh === 4 || seventh === 7 || seventh === 8 ? 2000 : 1900) + yy;
  if (year > currentYear || mm < 1 || mm > 12 || dd < 1) return false;
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  return dd <= (mm === 2 && leap ? 29 : DAYS[mm - 1]!);
}

/** Korean mobile prefixes (010 and the legacy 011/016–019). */
export function isKoreanMobilePrefix(g: string): boolean {
  return g.length === 3 && g[0] === "0" && g[1] === "1" && "016789".includes(g[2]!);
}

/**
 * Korean area codes written as the first group of a landline: Seoul 02, the regional
 * 031–064 block, 070 (VoIP), 080 (toll-free) and 050x (personal numbers).
 */
export function isKoreanAreaCode(g: string): boolean {
  if (g === "02" || g === "070" || g === "080") return true;
  if (g.length === 3) return g[0] === "0" && g[1]! >= "3" && g[1]! <= "6" && g[2]! >= "1" && g[2]! <= "5";
  return g.length === 4 && g.startsWith("050");
}
