/** Numbers, money and times in the console's language. */
import { lang } from "./i18n";

const locale = () => (lang() === "en" ? "en-US" : "ko-KR");
export const num = (n: number | null | undefined) => (n == null ? "–" : n.toLocaleString(locale()));
export const krw = (n: number | null | undefined, digits = 2) =>
  n == null ? "–" : `₩${n.toLocaleString(locale(), { maximumFractionDigits: digits })}`;
export const usd = (n: number | null | undefined) =>
  n == null ? "–" : `$${n.toLocaleString("en-US", { maximumFractionDigits: 4 })}`;
export const time = (iso: string) => new Date(iso).toLocaleString(locale());
export const pct = (n: number) => `${n.toLocaleString(locale(), { maximumFractionDigits: 2 })}%`;
/** The FX rate the gateway charges at, from the page's meta tag (no inline script). */
export const fxRate = () =>
  Number(document.querySelector('meta[name="gw-fx-usd-krw"]')?.getAttribute("content")) || 1400;
