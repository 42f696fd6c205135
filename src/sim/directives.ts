/**
 * Directives: bracketed tags such as `[sim:latency=200]` that tests put in the text of the
 * last user message (or a video prompt). The parser is generic — it knows no directive
 * names — so every protocol, including ones registered later, reads the same map.
 */

/** name (lower case, with `@provider` suffix when scoped) → value ("" for flags like `hang`). */
export type Directives = ReadonlyMap<string, string>;

const EMPTY: Directives = new Map();

// `[sim:NAME]`, `[sim:NAME=VALUE]`, `[sim:NAME@PROVIDER=VALUE]`; VALUE runs to the `]`.
const DIRECTIVE = /\[sim:([A-Za-z_][\w-]*)(@[\w.-]+)?(?:=([^\]]*))?\]/g;

/**
 * Parses every directive in `text`. Later duplicates win. Keys are lower-cased names, with
 * the scope kept: `[sim:fail@google=503]` is stored under `fail@google`.
 */
export function parseDirectives(text: string): Directives {
  // Fast path: nearly every request (benchmarks) has no directive at all.
  if (!text.includes("[sim:")) return EMPTY;
  const out = new Map<string, string>();
  for (const m of text.matchAll(DIRECTIVE)) {
    out.set(m[1]!.toLowerCase() + (m[2]?.toLowerCase() ?? ""), (m[3] ?? "").trim());
  }
  return out;
}

/** `text` without its directive tags (what replies echo back). */
export function stripDirectives(text: string): string {
  return text.includes("[sim:") ? text.replace(DIRECTIVE, "") : text;
}

/** A non-negative integer directive value, or undefined when absent or malformed. */
export function directiveInt(directives: Directives, name: string): number | undefined {
  const raw = directives.get(name);
  if (raw === undefined || !/^\d+$/.test(raw)) return undefined;
  return Number(raw);
}

/** A parsed `fail` value: `503` or `503x2` (fail the first 2 identical calls only). */
export interface FailureSpec {
  status: number;
  /** Only the first `times` calls with the same provider and body fail; undefined = always. */
  times?: number;
}

/** Parses `STATUS` or `STATUSxN`; undefined when malformed. */
export function parseFailure(value: string): FailureSpec | undefined {
  const m = /^(\d{3})(?:x(\d+))?$/i.exec(value);
  if (!m) return undefined;
  return m[2] === undefined ? { status: Number(m[1]) } : { status: Number(m[1]), times: Number(m[2]) };
}

/**
 * The failure that applies when served as `provider`: `fail@provider` wins over a plain
 * `fail`; a directive scoped to another provider does not apply.
 */
export function failureFor(directives: Directives, provider: string): FailureSpec | undefined {
  const raw = directives.get(`fail@${provider}`) ?? directives.get("fail");
  return raw === undefined ? undefined : parseFailure(raw);
}
