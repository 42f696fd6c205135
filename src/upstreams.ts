/**
 * Where each provider is reached, and whether it may be called at all. A provider is
 * *configured* when its credential (`<PROVIDER>_API_KEY`) is set. One without a credential is
 * served by the built-in upstream simulator only while the simulator is on (demo mode, or
 * `SIMULATOR=on` for staging and load tests); otherwise it is unavailable: no ordinary call is
 * routed to it, so nothing simulated is ever charged (docs/simulator.md, "Demo mode only").
 */
import type { Config } from "./config";
import type { CatalogProvider, CatalogSnapshot } from "./core/catalog/types";
import type { KeyPrincipal } from "./core/auth/principal";
import type { UpstreamEndpoint } from "./core/chat/ports";
import { GatewayError, text } from "./core/errors";
import { byokContext, type SecretBox } from "./lib/secret-box";

/** What the directory needs of a provider (the web plugin's search engine is one, outside the catalog). */
export type ProviderRef = Pick<CatalogProvider, "id" | "credentialEnv" | "baseUrlEnv" | "baseUrl">;

/** The web plugin's search engine (Brave Search): not a catalog provider, configured the same way. */
export const SEARCH_PROVIDER: ProviderRef = {
  id: "brave",
  credentialEnv: "BRAVE_API_KEY",
  baseUrlEnv: "BRAVE_BASE_URL",
  baseUrl: "https://api.search.brave.com",
};

export interface UpstreamDirectory {
  endpoint(provider: ProviderRef, principal?: KeyPrincipal): UpstreamEndpoint;
  /**
   * Whether an ordinary call may go to this provider: it is configured, or the simulator is on.
   * A BYOK key's own provider is available to that key's calls regardless (its credential is the key's).
   */
  available(provider: ProviderRef): boolean;
  /** Providers served by the simulator. */
  simulated(): string[];
  /** Whether the simulator answers this provider's ordinary calls (no credential, simulator on). */
  simulates(provider: ProviderRef): boolean;
}

const prefixOf = (envName: string) => envName.replace(/_(API_KEY|BASE_URL)$/, "");

/** The simulator would serve this provider: no credential and no base URL of its own. */
const simulatable = (cfg: Config, p: ProviderRef) =>
  !cfg.providerKeys[prefixOf(p.credentialEnv)] && !cfg.providerBaseUrls[prefixOf(p.baseUrlEnv)];

/** True when the simulator is on and some provider (the catalog's, or the search engine) would be served by it. */
export function needsSimulator(cfg: Config, snapshot: CatalogSnapshot | null): boolean {
  return cfg.simulator && [...(snapshot?.providers ?? []), SEARCH_PROVIDER].some((p) => simulatable(cfg, p));
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
  throw new GatewayError(
    "byok_encryption_unavailable",
    text(
      "이 BYOK 키의 자격 증명을 열 수 없습니다. 운영자에게 BYOK_ENCRYPTION_KEY 설정을 확인해 달라고 요청하세요.",
      "This BYOK key's credential cannot be opened. Ask the operator to check the BYOK_ENCRYPTION_KEY setting.",
    ),
  );
}

interface Resolved {
  baseUrl: string;
  apiKey: string;
  simulated: boolean;
  available: boolean;
}

export function upstreamDirectory(
  cfg: Config,
  simBaseUrl: ((provider: string) => string) | null,
  providers: readonly ProviderRef[] = [],
  byok: SecretBox | null = null,
): UpstreamDirectory {
  const resolve = (p: ProviderRef): Resolved => {
    const key = cfg.providerKeys[prefixOf(p.credentialEnv)];
    const base = cfg.providerBaseUrls[prefixOf(p.baseUrlEnv)];
    if (key) return { baseUrl: base ?? p.baseUrl, apiKey: key, simulated: false, available: true };
    // Without a credential only the simulator's switch makes a provider callable; a base URL of
    // its own (a test double, a staging server) is then where it is reached. Off, the endpoint
    // stays the provider's own, for BYOK keys that bring the credential.
    if (cfg.simulator && !base && simBaseUrl)
      return { baseUrl: simBaseUrl(p.id), apiKey: "simulated", simulated: true, available: true };
    return { baseUrl: base ?? p.baseUrl, apiKey: "not-configured", simulated: false, available: cfg.simulator };
  };
  const seen = new Map<string, Resolved>();
  const get = (p: ProviderRef) => {
    let e = seen.get(p.id);
    if (!e) seen.set(p.id, (e = resolve(p)));
    return e;
  };
  for (const p of providers) get(p);
  return {
    endpoint(p, principal) {
      const e = get(p);
      // A BYOK key calls the same endpoint with the user's own credential.
      if (principal?.kind === "byok" && principal.byokProvider === p.id && principal.byokSecretSealed)
        return { baseUrl: e.baseUrl, apiKey: openByok(byok, principal) };
      return { baseUrl: e.baseUrl, apiKey: e.apiKey };
    },
    available: (p) => get(p).available,
    simulated: () => [...seen.entries()].filter(([, e]) => e.simulated).map(([id]) => id),
    simulates: (p) => get(p).simulated,
  };
}
