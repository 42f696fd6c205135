/**
 * The catalog and who answers for its providers: the verified catalog store, the upstream
 * simulator when it is needed, the upstream directory (credentials and base URLs, BYOK
 * included) and the lifecycle port (the day, and which offerings the simulator answers).
 */
import type { Config } from "../config";
import { CatalogStore } from "../config/catalog-store";
import { utcToday, type LifecyclePort } from "../core/catalog/lifecycle";
import type { CatalogSnapshot } from "../core/catalog/types";
import { log } from "../lib/log";
import type { SecretBox } from "../lib/secret-box";
import { startSimulator, type Simulator } from "../sim";
import { paymentsNeedSimulator } from "./payments";
import { needsSimulator, SEARCH_PROVIDER, upstreamDirectory, type UpstreamDirectory } from "../upstreams";

export interface CatalogPart {
  catalog: CatalogStore;
  /** The catalog as loaded at start; null when it failed verification. */
  snapshot: CatalogSnapshot | null;
  /** The in-process upstream simulator, when it is on and some provider has no credential. */
  sim: Simulator | null;
  upstreams: UpstreamDirectory;
  lifecycle: LifecyclePort;
}

export async function catalogAndUpstreams(cfg: Config, byok: SecretBox | null): Promise<CatalogPart> {
  const catalog = new CatalogStore({
    env: { CATALOG_PATH: cfg.CATALOG_PATH, CATALOG_HASH_PATH: cfg.CATALOG_HASH_PATH },
  });
  if (!catalog.peek())
    log.error("catalog failed verification; model endpoints answer 503", { problems: catalog.describeErrors() });
  const snapshot = catalog.peek();
  // The simulator runs only when it is on (demo mode, SIMULATOR=on) and some provider (the web
  // plugin's search engine included) has neither credential nor base URL of its own, or it is
  // the payment provider (docs/payments.md).
  const sim =
    needsSimulator(cfg, snapshot) || paymentsNeedSimulator(cfg) ? await startSimulator({ port: cfg.SIM_PORT }) : null;
  const upstreams = upstreamDirectory(
    cfg,
    sim ? (provider) => sim.baseUrl(provider) : null,
    [...(snapshot?.providers ?? []), SEARCH_PROVIDER],
    byok,
  );
  // Outside demo mode the simulator is an explicit opt-in: say so at every start, naming what it answers for.
  if (cfg.simulator && !cfg.demoMode) {
    log.warn(
      "SIMULATOR=on: the built-in simulator answers (and calls are charged) for providers without a credential; never use it in production",
      { simulated: upstreams.simulated() },
    );
  } else if (!cfg.demoMode && snapshot && !snapshot.providers.some((p) => upstreams.available(p))) {
    // Production with no credential at all: every model call would be refused. One line says so.
    log.warn(
      "no provider is configured (no <PROVIDER>_API_KEY set): model calls are refused with 503 provider_not_configured, except through BYOK keys; set a provider's credential (README, Configuration)",
    );
  }

  // Deprecation and retirement (docs/catalog.md, "Model lifecycle"): the day, and which offerings the simulator answers.
  const lifecycle: LifecyclePort = {
    today: () => cfg.CATALOG_TODAY ?? utcToday(),
    simulated: (offering) => {
      const provider = catalog.current().providersById[offering.providerId];
      return provider !== undefined && upstreams.simulates(provider);
    },
  };
  return { catalog, snapshot, sim, upstreams, lifecycle };
}
