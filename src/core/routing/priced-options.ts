/**
 * Request options that change what a provider charges: OpenAI's `service_tier` and Anthropic's
 * one-hour cache TTL. Each candidate is priced for the options it will be sent (its offering's
 * pricing replaced), so its hold and its charge are what the provider bills; an option the
 * catalog has no price for is refused with 400 before any hold, never forwarded.
 */
import { GatewayError, text } from "../errors";
import { PRICED_SERVICE_TIERS, type PricedServiceTier } from "../catalog/schema";
import type { CatalogOffering, CatalogProvider, TokenPricing } from "../catalog/types";
import type { ChatRequest } from "../model/types";

export interface PricedOptions {
  /** The `service_tier` a provider that takes one is sent; `auto` is sent as `default` (see the OpenAI adapter). */
  serviceTier: string | undefined;
  /** The TTLs the request's `cache_control` breakpoints ask for (none: the five-minute default). */
  cacheTtls: ReadonlySet<string>;
}

/** No TTL asked for: shared, as most requests ask for none (a set per call was garbage). */
const NO_TTLS: ReadonlySet<string> = new Set();

export function pricedOptionsOf(req: Pick<ChatRequest, "service_tier" | "messages" | "anthropic">): PricedOptions {
  let cacheTtls: Set<string> | undefined;
  for (const m of req.messages) {
    if (!Array.isArray(m.content)) continue;
    for (const part of m.content)
      if (part.cache_control?.ttl !== undefined) (cacheTtls ??= new Set()).add(String(part.cache_control.ttl));
  }
  // A Messages client's own body goes to Anthropic as sent: its breakpoints anywhere count.
  if (req.anthropic) nativeTtls(req.anthropic.body, (cacheTtls ??= new Set()));
  const serviceTier = req.service_tier === "auto" ? "default" : req.service_tier;
  return { serviceTier, cacheTtls: cacheTtls?.size ? cacheTtls : NO_TTLS };
}

/**
 * Every `cache_control.ttl` of a native Messages body: on the body itself, each tool (server
 * tools too), system blocks, messages and their blocks at any depth (a tool result's content).
 */
function nativeTtls(body: Record<string, unknown>, out: Set<string>): void {
  const walk = (v: unknown, depth: number): void => {
    if (depth > 64 || !v || typeof v !== "object") return;
    if (Array.isArray(v)) {
      for (const x of v) walk(x, depth + 1);
      return;
    }
    const o = v as Record<string, unknown>;
    const cc = o.cache_control as { ttl?: unknown } | null | undefined;
    if (cc && typeof cc === "object" && cc.ttl !== undefined) out.add(String(cc.ttl));
    // A tool call's input is the model's data, not a breakpoint.
    for (const [k, x] of Object.entries(o)) if (k !== "cache_control" && k !== "input") walk(x, depth + 1);
  };
  const own = (o: unknown) => {
    const cc = (o as { cache_control?: { ttl?: unknown } | null } | null)?.cache_control;
    if (cc && typeof cc === "object" && cc.ttl !== undefined) out.add(String(cc.ttl));
  };
  own(body);
  // A tool's breakpoint is its own; its schema may name any property.
  if (Array.isArray(body.tools)) for (const t of body.tools) own(t);
  walk(body.system, 0);
  walk(body.messages, 0);
}

const isPricedTier = (t: string): t is PricedServiceTier => (PRICED_SERVICE_TIERS as readonly string[]).includes(t);

/** The offering as this request is billed on it; 400 `unsupported_parameter` for an option without a price. */
export function priceOffering(o: CatalogOffering, provider: CatalogProvider, opts: PricedOptions): CatalogOffering {
  let pricing: TokenPricing = o.pricing!;
  const tier = opts.serviceTier;
  if (provider.serviceTier && tier !== undefined && tier !== "default") {
    const tierPricing = isPricedTier(tier) ? o.serviceTiers?.[tier] : undefined;
    if (!tierPricing) {
      const offered = ["auto", "default", ...Object.keys(o.serviceTiers ?? {})].join(", ");
      throw new GatewayError(
        "unsupported_parameter",
        text(
          `'${o.modelId}'(${provider.id})에는 service_tier '${tier}'를 쓸 수 없습니다. 가능한 값: ${offered}.`,
          `service_tier '${tier}' is not available for '${o.modelId}' (${provider.id}). Possible values: ${offered}.`,
        ),
        { param: "service_tier" },
      );
    }
    pricing = tierPricing;
  }
  if (provider.caching !== "explicit") return pricing === o.pricing ? o : { ...o, pricing };
  for (const ttl of opts.cacheTtls) {
    if (ttl === "5m" || (ttl === "1h" && pricing.cacheWrite1h != null)) continue;
    throw new GatewayError(
      "unsupported_parameter",
      text(
        `'${o.modelId}'(${provider.id})에는 cache_control.ttl '${ttl}'을(를) 쓸 수 없습니다. 가능한 값: 5m${pricing.cacheWrite1h != null ? ", 1h" : ""}.`,
        `cache_control.ttl '${ttl}' is not available for '${o.modelId}' (${provider.id}). Possible values: 5m${pricing.cacheWrite1h != null ? ", 1h" : ""}.`,
      ),
    );
  }
  // The one-hour write price sizes the hold only when the request asks for that TTL.
  if (!opts.cacheTtls.has("1h") && pricing.cacheWrite1h != null) {
    const { cacheWrite1h: _unused, ...rest } = pricing;
    pricing = rest;
  }
  return pricing === o.pricing ? o : { ...o, pricing };
}
