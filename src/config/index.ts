/**
 * Boot-time configuration: the environment validated against one schema, with every
 * problem listed. Provider credentials are read generically (`<PROVIDER>_API_KEY`,
 * `<PROVIDER>_BASE_URL`) since the provider list lives in the catalog.
 */
import { Value } from "@sinclair/typebox/value";
import { BOOL_SPELLINGS, EnvSchema, parseBool, type Env } from "./schema";
import { paymentProblems } from "./payments";

type Derived = "UPSTREAM_MAX_CONCURRENT" | "CONCURRENCY_PER_ACCOUNT" | "CONCURRENCY_PER_KEY";

export interface Config extends Omit<Env, Derived>, Record<Derived, number> {
  demoMode: boolean;
  /**
   * Whether the simulator stands in for providers without a credential: `SIMULATOR` when set,
   * else demo mode. Off, such a provider is unavailable (never simulated, never charged).
   */
  simulator: boolean;
  /** Upper-case provider id → credential / base URL from the environment. */
  providerKeys: Readonly<Record<string, string>>;
  providerBaseUrls: Readonly<Record<string, string>>;
}

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n${problems.map((p) => `  - ${p}`).join("\n")}`);
  }
}

const SECRET = /(SECRET|TOKEN|_KEY)$/;
const NUMERIC = new Set(
  Object.entries(EnvSchema.properties)
    .filter(([, s]) => s.type === "integer" || s.type === "number")
    .map(([k]) => k),
);
const BOOLEAN = new Set(
  Object.entries(EnvSchema.properties)
    .filter(([, s]) => s.type === "boolean")
    .map(([k]) => k),
);
const BOOL_LIST = BOOL_SPELLINGS.join(", ");

/** Why a DATABASE_URL cannot be used, or null; the URL itself is not repeated (it holds a password). */
function databaseUrlProblem(url: string): string | null {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return "DATABASE_URL: not a valid URL (expected postgres://user:password@host:5432/database)";
  }
  // A Unix socket is named by ?host=/path with an empty host part.
  if (!u.hostname && !u.searchParams.get("host"))
    return "DATABASE_URL: the URL names no host (expected postgres://user:password@host:5432/database)";
  return null;
}

export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const raw: Record<string, unknown> = {};
  const problems: string[] = [];
  for (const name of Object.keys(EnvSchema.properties)) {
    const v = env[name];
    if (v === undefined || v === "") continue;
    if (BOOLEAN.has(name)) {
      const b = parseBool(v);
      if (b === undefined) problems.push(`${name}: expected one of ${BOOL_LIST} (any case), got "${v}"`);
      else raw[name] = b;
    } else if (NUMERIC.has(name)) {
      const n = Number(v);
      if (!Number.isFinite(n)) problems.push(`${name}: expected a number, got "${v}"`);
      else raw[name] = n;
    } else raw[name] = v;
  }
  const withDefaults = Value.Default(EnvSchema, raw) as Record<string, unknown>;
  for (const e of Value.Errors(EnvSchema, withDefaults)) {
    const name = e.path.replace(/^\//, "");
    // A secret's value is not repeated: the message ends up in logs.
    const got = SECRET.test(name) ? "value hidden" : `got ${JSON.stringify(e.value)}`;
    if (!problems.some((p) => p.startsWith(`${name}:`))) problems.push(`${name}: ${e.message} (${got})`);
  }
  for (const p of String(env.TRUSTED_PROXIES ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean)) {
    if (!/^[0-9a-fA-F:.]+(\/\d{1,3})?$/.test(p)) problems.push(`TRUSTED_PROXIES: "${p}" is not an IP or CIDR`);
  }
  if (typeof withDefaults.DATABASE_URL === "string" && !problems.some((p) => p.startsWith("DATABASE_URL:"))) {
    const bad = databaseUrlProblem(withDefaults.DATABASE_URL);
    if (bad) problems.push(bad);
  }
  // Bun runs at most BUN_CONFIG_MAX_HTTP_REQUESTS fetches at once (read once at process start;
  // main.ts applies the schema's default to the process, see src/boot/fetch-limit.ts) and
  // silently queues the rest: the budget stays under it, with a quarter left for what is not
  // a model call (embeddings, web searches, video polls, parallel policies' extra sub-calls).
  const bunMax =
    typeof withDefaults.BUN_CONFIG_MAX_HTTP_REQUESTS === "number" ? withDefaults.BUN_CONFIG_MAX_HTTP_REQUESTS : 4096;
  const budgetCap = Math.floor((bunMax * 3) / 4);
  const budget = withDefaults.UPSTREAM_MAX_CONCURRENT;
  if (typeof budget === "number" && budget > budgetCap) {
    problems.push(
      `UPSTREAM_MAX_CONCURRENT: ${budget} is more than 3/4 of Bun's fetch limit (BUN_CONFIG_MAX_HTTP_REQUESTS=${bunMax}); raise BUN_CONFIG_MAX_HTTP_REQUESTS to at least ${Math.ceil((budget * 4) / 3)}`,
    );
  }
  const today = withDefaults.CATALOG_TODAY;
  const todayAt = typeof today === "string" ? Date.parse(`${today}T00:00:00Z`) : 0;
  const realDay = Number.isFinite(todayAt) && new Date(todayAt).toISOString().slice(0, 10) === today;
  if (typeof today === "string" && !realDay && !problems.some((p) => p.startsWith("CATALOG_TODAY:")))
    problems.push(`CATALOG_TODAY: "${today}" is not a calendar date`);
  const { HEDGE_MIN_DELAY_MS: hedgeMin, HEDGE_MAX_DELAY_MS: hedgeMax } = withDefaults;
  if (typeof hedgeMin === "number" && typeof hedgeMax === "number" && hedgeMin > hedgeMax) {
    problems.push(`HEDGE_MIN_DELAY_MS: ${hedgeMin} is more than HEDGE_MAX_DELAY_MS (${hedgeMax})`);
  }
  problems.push(...paymentProblems(withDefaults));
  if (problems.length) throw new ConfigError(problems);

  const parsed = withDefaults as Env;
  const base = parsed.UPSTREAM_MAX_CONCURRENT || budgetCap;
  const cfg = {
    ...parsed,
    UPSTREAM_MAX_CONCURRENT: parsed.UPSTREAM_MAX_CONCURRENT ?? budgetCap,
    CONCURRENCY_PER_ACCOUNT: parsed.CONCURRENCY_PER_ACCOUNT ?? Math.max(1, Math.ceil(base / 4)),
    CONCURRENCY_PER_KEY: parsed.CONCURRENCY_PER_KEY ?? Math.max(1, Math.ceil(base / 8)),
  };
  const providerKeys: Record<string, string> = {};
  const providerBaseUrls: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) {
    if (!v) continue;
    const m = /^([A-Z][A-Z0-9]*)_(API_KEY|BASE_URL)$/.exec(k);
    if (!m || k === "ADMIN_TOKEN") continue;
    (m[2] === "API_KEY" ? providerKeys : providerBaseUrls)[m[1]!] = v;
  }
  const demoMode = cfg.DEMO_MODE ?? !cfg.DATABASE_URL;
  const simulator = cfg.SIMULATOR ?? demoMode;
  return Object.freeze({
    ...cfg,
    demoMode,
    simulator,
    providerKeys: Object.freeze(providerKeys),
    providerBaseUrls: Object.freeze(providerBaseUrls),
  });
}
