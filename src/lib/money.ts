/**
 * Exact money arithmetic. The ledger counts micro-won (1 KRW = 1,000,000 µ₩) in bigint, so
 * a call costing a fraction of a won is charged exactly and floating point never touches a
 * balance. Prices are integers too: USD micro-dollars per million tokens, and the FX rate in
 * milli-won per dollar.
 */

export const MICRO_PER_KRW = 1_000_000n;

/** 0.1 KRW: the minimum charge of a successful call (docs/decisions.md #10). */
export const MIN_CHARGE_MICRO = 100_000n;

/** KRW (integer or decimal string/number with ≤ 6 decimals) → micro-won. */
export function krwToMicro(krw: number | bigint | string): bigint {
  if (typeof krw === "bigint") return krw * MICRO_PER_KRW;
  const s = typeof krw === "number" ? krw.toFixed(6) : krw;
  const m = /^(-?)(\d+)(?:\.(\d{1,6})\d*)?$/.exec(s.trim());
  if (!m) throw new RangeError(`not a KRW amount: ${s}`);
  const frac = (m[3] ?? "").padEnd(6, "0");
  const v = BigInt(m[2]!) * MICRO_PER_KRW + BigInt(frac);
  return m[1] ? -v : v;
}

/** micro-won → a JS number of KRW with up to 6 decimals, for display only. */
export function microToKrw(micro: bigint): number {
  const neg = micro < 0n;
  const a = neg ? -micro : micro;
  const s = `${a / MICRO_PER_KRW}.${(a % MICRO_PER_KRW).toString().padStart(6, "0")}`;
  return (neg ? -1 : 1) * Number(s);
}

/**
 * Integer KRW shown as `cost.krw`: rounded half up from the exact micro-won amount. The
 * ledger keeps the exact value; this is the display figure only.
 */
export function microToKrwRounded(micro: bigint): number {
  // Floor division: bigint `/` truncates toward zero, which rounds negatives the wrong way.
  const n = micro + MICRO_PER_KRW / 2n;
  const q = n / MICRO_PER_KRW;
  return Number(n < 0n && q * MICRO_PER_KRW !== n ? q - 1n : q);
}

/** Ceiling division for non-negative bigints. */
export function ceilDiv(a: bigint, b: bigint): bigint {
  return (a + b - 1n) / b;
}

/** USD decimal (e.g. 0.15) → integer micro-dollars. */
export function usdToMicros(usd: number): number {
  return Math.round(usd * 1_000_000);
}

/** FX rate (KRW per USD, e.g. 1400.5) → integer milli-won per dollar. */
export function fxToMilli(fx: number): bigint {
  return BigInt(Math.round(fx * 1000));
}

/**
 * Cost in micro-won of `tokens` at `usdMicrosPerMTok` (micro-dollars per million tokens) and
 * `fxMilli` (milli-won per dollar), rounded up to the next micro-won:
 * tokens × p/1e6 $/Mtok / 1e6 × fx/1e3 ₩/$ × 1e6 µ₩/₩ = tokens × p × fx / 1e9.
 */
export function tokenCostMicro(tokens: number, usdMicrosPerMTok: number, fxMilli: bigint): bigint {
  if (tokens <= 0 || usdMicrosPerMTok <= 0) return 0n;
  return ceilDiv(BigInt(tokens) * BigInt(usdMicrosPerMTok) * fxMilli, 1_000_000_000n);
}

/** micro-won → USD as a number (display): micro / 1e6 / (fxMilli/1e3). */
export function microToUsd(micro: bigint, fxMilli: bigint): number {
  if (fxMilli <= 0n) return 0;
  // Keep 9 decimal digits of USD before converting to a float.
  const nanoUsd = (micro * 1_000_000n) / fxMilli; // µ₩·1e6/(m₩/$) = 1e-9 $ units
  return Number(nanoUsd) / 1e9;
}
