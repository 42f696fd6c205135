/** Korean (default) and English. The choice is the user's, else the browser's first of the two. */
import { ko } from "./messages-ko";
import { en } from "./messages-en";

export type Lang = "ko" | "en";
export type MessageKey = keyof typeof ko;
const TABLES: Record<Lang, Record<MessageKey, string>> = { ko, en };
const STORE = "gw-console-lang";

export function initialLang(): Lang {
  const saved = localStorage.getItem(STORE);
  if (saved === "ko" || saved === "en") return saved;
  for (const l of navigator.languages ?? [navigator.language]) {
    const base = l.toLowerCase().slice(0, 2);
    if (base === "ko" || base === "en") return base;
  }
  return "ko";
}

let current: Lang = "ko";
export const lang = () => current;

export function setLang(l: Lang, remember = true): void {
  current = l;
  document.documentElement.lang = l;
  if (remember) localStorage.setItem(STORE, l);
}

/** The message in the current language; `{name}` placeholders are filled from `vars`. */
export function t(key: MessageKey, vars: Record<string, string | number> = {}): string {
  return TABLES[current][key].replace(/\{(\w+)\}/g, (_, k) => String(vars[k] ?? ""));
}
