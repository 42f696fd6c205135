/** Light or dark: the user's choice, else the system's. */
const STORE = "gw-console-theme";
export type Theme = "light" | "dark";

export const theme = (): Theme => (document.documentElement.dataset.theme === "dark" ? "dark" : "light");

export function initialTheme(): Theme {
  const saved = localStorage.getItem(STORE);
  if (saved === "light" || saved === "dark") return saved;
  return matchMedia("(prefers-color-scheme: dark)").matches ? "dark" : "light";
}

export function setTheme(t: Theme, remember = true): void {
  document.documentElement.dataset.theme = t;
  if (remember) localStorage.setItem(STORE, t);
}
