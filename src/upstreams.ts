/**
 * Where each provider is reached: its configured credential and base URL, or, for a provider
 * without a credential, the built-in upstream simulator (tests, demo mode, benchmarks).
 */
import type { Config } from "./config";
import type { CatalogProvider, CatalogSnapshot } from "./core/catalog/types";
import type { KeyPrincipal } from "./core/auth/principal";
import type { UpstreamEndpoint } from "./core/chat/ports";
import { GatewayError, text } from "./core/errors";
import { byokContext, type SecretBox } from "./lib/secret-box";

export interface UpstreamDirectory {
  endpoint(provider: CatalogProvider, principal?: KeyPrincipal): UpstreamEndpoint;
  /** Providers served by the simulator. */
  simulated(): string[];
}

const prefixOf = (envName: string) => envName.replace(/_(API_KEY|BASE_URL)$/, "");

/** True when some provider of the catalog has neither a credential nor a base URL configured. */
export function needsSimulator(cfg: Config, snapshot: CatalogSnapshot): boolean {
  return snapshot.providers.some((p) => !cfg.providerKeys[prefixOf(p.credentialEnv)] && !cfg.providerBaseUrls[prefixOf(p.baseUrlEnv)]);
}

/**
 * A BYOK key's credential, opened for this one call: the request path and the key cache only
 * ever hold it sealed. A key that cannot open it (another instance sealed it with another
 * key) is a 503 of ours, before any upstream is called.
 */
function openByok(byok: SecretBox | null, principal: KeyPrincipal): string {
  try {
    if (byok) return byok.open(principal.byokSecretSealed!, byokContext(principal.keyId));
  } catch {}
  throw new GatewayError("byok_encryption_unavailable", text("이 BYOK 키의 자격 증명을 열 수 없습니다. 운영자에게 BYOK_ENCRYPTION_KEY 설정을 확인해 달라고 요청하세요.", "This BYOK key's credential cannot be opened. Ask the operator to check the BYOK_ENCRYPTION_KEY setting."));
}

export function upstreamDirectory(
  cfg: Config,
  simBaseUrl: ((provider: string) => string) | null,
  providers: readonly CatalogProvider[] = [],
  byok: SecretBox | null = null,
): UpstreamDirectory {
  const resolve = (p: CatalogProvider) => {
    const key = cfg.providerKeys[prefixOf(p.credentialEnv)];
    const base = cfg.providerBaseUrls[prefixOf(p.baseUrlEnv)];
    if (key || base) return { baseUrl: base ?? p.baseUrl, apiKey: key ?? "not-configured", simulated: false };
    if (simBaseUrl) return { baseUrl: simBaseUrl(p.id), apiKey: "simulated", simulated: true };
    return { baseUrl: p.baseUrl, apiKey: "not-configured", simulated: false };
  };
  const seen = new Map<string, ReturnType<typeof resolve>>();
  const get = (p: CatalogProvider) => {
    let e = seen.get(p.id);
    if (!e) seen.set(p.id, (e = resolve(p)));
    return e;
  };
  for (const p of providers) get(p);
  return {
    endpoint(p, principal) {
      const e = get(p);
      // A BYOK key calls the same endpoint with the user's own credential.
      if (principal?.kind === "byok" && principal.byokProvider === p.id && principal.byokSecretSealed) return { baseUrl: e.baseUrl, apiKey: openByok(byok, principal) };
      return { baseUrl: e.baseUrl, apiKey: e.apiKey };
    },
    simulated: () => [...seen.entries()].filter(([, e]) => e.simulated).map(([id]) => id),
  };
}
