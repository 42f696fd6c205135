/**
 * The language of a request's error messages: English when its Accept-Language prefers
 * English to Korean, else Korean (the default, also without the header).
 *
 * Each range's weight is its `q` (default 1; `q=0` means "not acceptable"). A language's
 * weight is that of the most specific range matching it: `en`, `en-US`, … for English, else
 * `*`. English wins when its weight is above zero and above Korean's; on a tie the range
 * listed first wins, as browsers list in order of preference.
 */
import type { Lang } from "../core/errors";

interface Pref {
  q: number;
  /** Position of the deciding range; lower wins a tie. */
  at: number;
  /** 2 for a language range, 1 for `*`, 0 for none. */
  specific: number;
}

const NONE: Pref = { q: 0, at: Infinity, specific: 0 };

export function preferredLang(header: string | null | undefined): Lang {
  if (!header) return "ko";
  let en = NONE;
  let ko = NONE;
  let star = NONE;
  const ranges = header.split(",");
  for (let i = 0; i < ranges.length && i < 32; i++) {
    const [rawTag = "", ...params] = ranges[i]!.split(";");
    const tag = rawTag.trim().toLowerCase();
    let q = 1;
    for (const p of params) {
      const m = /^\s*q\s*=\s*([01](?:\.\d{0,3})?)\s*$/i.exec(p);
      if (m) q = Math.min(1, Number(m[1]));
    }
    const primary = tag.split("-")[0];
    const pref = { q, at: i, specific: 2 };
    // A language named twice keeps its first (most preferred) weight.
    if (primary === "en" && en.specific < 2) en = pref;
    else if (primary === "ko" && ko.specific < 2) ko = pref;
    else if (tag === "*" && star.specific === 0) star = { q, at: i, specific: 1 };
  }
  if (en.specific === 0) en = star;
  if (ko.specific === 0) ko = star;
  if (en.q <= 0) return "ko";
  return en.q > ko.q || (en.q === ko.q && en.at < ko.at) ? "en" : "ko";
}

export function requestLang(request: Request): Lang {
  return preferredLang(request.headers.get("accept-language"));
}
