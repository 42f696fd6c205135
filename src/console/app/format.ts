/** Numbers, money and times in the console's language. */
import { lang } from "./i18n";

const locale = () => (lang() === "en" ? "en-US" : "ko-KR");
export const num = (n: number | null | undefined) => (n == null ? "–" : n.toLocaleString(locale()));
/**
 * Every amount of money of the account (balances, spend, a call's cost), one rounding
 * everywhere: below ₩1 up to 4 decimals (₩0.6006; under ₩0.0001 but not zero: <₩0.0001),
 * from ₩1 whole won with separators (₩601, ₩12,345). docs/console.md, "Money".
 */
export const krw = (n: number | null | undefined) => {
  if (n == null) return "–";
  const a = Math.abs(n);
  if (a > 0 && a < 0.0001) return `${n < 0 ? "-" : ""}<₩0.0001`;
  const s = a.toLocaleString(locale(), { maximumFractionDigits: a < 1 ? 4 : 0 });
  return `${n < 0 ? "-" : ""}₩${s}`;
};
/** A catalog price (per million tokens, per second): not an amount of the account, so its own digits. */
export const krwPrice = (n: number | null | undefined, digits = 0) =>
  n == null ? "–" : `₩${n.toLocaleString(locale(), { maximumFractionDigits: digits })}`;
export const usd = (n: number | null | undefined) =>
  n == null ? "–" : `$${n.toLocaleString("en-US", { maximumFractionDigits: 4 })}`;
export const time = (iso: string) => new Date(iso).toLocaleString(locale());
export const pct = (n: number) => `${n.toLocaleString(locale(), { maximumFractionDigits: 2 })}%`;
/** The FX rate the gateway charges at, from the page's meta tag (no inline script). */
export const fxRate = () =>
  Number(document.querySelector('meta[name="gw-fx-usd-krw"]')?.getAttribute("content")) || 1400;
