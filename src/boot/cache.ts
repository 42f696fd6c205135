/**
 * The response cache, with semantic matching through the catalog's embedding model. Where that
 * model's provider cannot be called, the cache matches exactly only (ResponseCache without
 * `embed`). The embedding is made through the provider's own adapter (simulated only while the
 * simulator stands in for it).
 */
import type { Config } from "../config";
import type { CatalogStore } from "../config/catalog-store";
import { ResponseCache } from "../core/cache";
import { getOfferings, getProvider, type CatalogSnapshot } from "../core/catalog/types";
import type { Protocol } from "../core/model/provider";
import type { Database } from "../db/client";
import { ResponseCacheRepo } from "../db/repos/response-cache";
import { embeddingProviderFor } from "../providers";
import type { UpstreamDirectory } from "../upstreams";

export function responseCacheOf(
  cfg: Config,
  db: Database,
  catalog: CatalogStore,
  upstreams: UpstreamDirectory,
): ResponseCache {
  const embeddingOffering = (snap: CatalogSnapshot) => {
    const model = snap.models.find((m) => m.modality === "embedding" && m.active);
    return (
      model &&
      getOfferings(snap, model.id).find((o) => {
        const p = getProvider(snap, o.providerId);
        return p && upstreams.available(p);
      })
    );
  };
  const snapshot = catalog.peek();
  return new ResponseCache(new ResponseCacheRepo(db), {
    ttlSeconds: cfg.RESPONSE_CACHE_TTL_SECONDS,
    threshold: cfg.SEMANTIC_CACHE_THRESHOLD,
    embed:
      snapshot && !embeddingOffering(snapshot)
        ? undefined
        : async (text) => {
            const snap = catalog.current();
            const offering = embeddingOffering(snap);
            const provider = offering && getProvider(snap, offering.providerId);
            const adapter = provider && embeddingProviderFor(provider.protocol as Protocol);
            if (!offering || !provider || !adapter) throw new Error("no embedding model in the catalog");
            const ep = upstreams.endpoint(provider);
            const out = await adapter.embed([text], offering.upstreamId, {
              providerId: provider.id,
              baseUrl: ep.baseUrl,
              apiKey: ep.apiKey,
              firstByteTimeoutMs: 2000,
              idleTimeoutMs: 2000,
            });
            return out.vectors[0]!;
          },
  });
}
