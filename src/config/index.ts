/**
 * Boot-time configuration: the environment validated against one schema, with every
 * problem listed. Provider credentials are read generically (`<PROVIDER>_API_KEY`,
 * `<PROVIDER>_BASE_URL`) since the provider list lives in the catalog.
 */
import { Value } from "@sinclair/typebox/value";
import { EnvSchema, type Env } from "./schema";

type Derived = "UPSTREAM_MAX_CONCURRENT" | "CONCURRENCY_PER_ACCOUNT" | "CONCURRENCY_PER_KEY";

export interface Config extends Omit<Env, Derived | "LOG_REQUESTS">, Record<Derived, number> {
  demoMode: boolean;
  /** LOG_REQUESTS, read as a switch. */
  LOG_REQUESTS: boolean;
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
const NUMERIC = new Set(Object.entries(EnvSchema.properties).filter(([, s]) => s.type === "integer" || s.type === "number").map(([k]) => k));

export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const raw: Record<string, unknown> = {};
  const problems: string[] = [];
  for (const name of Object.keys(EnvSchema.properties)) {
    const v = env[name];
    if (v === undefined || v === "") continue;
    if (NUMERIC.has(name)) {
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
  for (const p of String(env.TRUSTED_PROXIES ?? "").split(",").map((s) => s.trim()).filter(Boolean)) {
    if (!/^[0-9a-fA-F:.]+(\/\d{1,3})?$/.test(p)) problems.push(`TRUSTED_PROXIES: "${p}" is not an IP or CIDR`);
  }
  // Bun runs at most BUN_CONFIG_MAX_HTTP_REQUESTS fetches at once (read once at start) and
  // silently queues the rest: the budget stays under it, with a quarter left for what is not
  // a model call (embeddings, web searches, video polls, parallel policies' extra sub-calls).
  const bunMax = Number(env.BUN_CONFIG_MAX_HTTP_REQUESTS) > 0 ? Math.floor(Number(env.BUN_CONFIG_MAX_HTTP_REQUESTS)) : 256;
  const budgetCap = Math.floor((bunMax * 3) / 4);
  const budget = withDefaults.UPSTREAM_MAX_CONCURRENT;
  if (typeof budget === "number" && budget > budgetCap) {
    problems.push(`UPSTREAM_MAX_CONCURRENT: ${budget} is more than 3/4 of Bun's fetch limit (BUN_CONFIG_MAX_HTTP_REQUESTS=${bunMax}); raise BUN_CONFIG_MAX_HTTP_REQUESTS to at least ${Math.ceil((budget * 4) / 3)}`);
  }
  if (problems.length) throw new ConfigError(problems);

  const parsed = withDefaults as Env;
  const base = parsed.UPSTREAM_MAX_CONCURRENT || budgetCap;
  const cfg = {
    ...parsed,
    UPSTREAM_MAX_CONCURRENT: parsed.UPSTREAM_MAX_CONCURRENT ?? budgetCap,
    CONCURRENCY_PER_ACCOUNT: parsed.CONCURRENCY_PER_ACCOUNT ?? Math.max(1, Math.ceil(base / 4)),
    CONCURRENCY_PER_KEY: parsed.CONCURRENCY_PER_KEY ?? Math.max(1, Math.ceil(base / 8)),
    LOG_REQUESTS: parsed.LOG_REQUESTS === "on" || parsed.LOG_REQUESTS === "true" || parsed.LOG_REQUESTS === "1",
  };
  const providerKeys: Record<string, string> = {};
  const providerBaseUrls: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) {
    if (!v) continue;
    const m = /^([A-Z][A-Z0-9]*)_(API_KEY|BASE_URL)$/.exec(k);
    if (!m || k === "ADMIN_TOKEN") continue;
    (m[2] === "API_KEY" ? providerKeys : providerBaseUrls)[m[1]!] = v;
  }
  const demoMode = cfg.DEMO_MODE ? cfg.DEMO_MODE === "true" : !cfg.DATABASE_URL;
  return Object.freeze({ ...cfg, demoMode, providerKeys: Object.freeze(providerKeys), providerBaseUrls: Object.freeze(providerBaseUrls) });
}
