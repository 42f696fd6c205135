/**
 * Boot-time configuration: the environment validated against one schema, with every
 * problem listed. Provider credentials are read generically (`<PROVIDER>_API_KEY`,
 * `<PROVIDER>_BASE_URL`) since the provider list lives in the catalog.
 */
import { Value } from "@sinclair/typebox/value";
import { EnvSchema, type Env } from "./schema";

export interface Config extends Env {
  demoMode: boolean;
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
  if (problems.length) throw new ConfigError(problems);

  const cfg = withDefaults as Env;
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
