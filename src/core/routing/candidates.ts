/**
 * Which provider offerings a chat call may use, in the order they are tried: the resolved
 * model's offerings (or a routing parent's leaves, each with its offerings), narrowed by the
 * key (BYOK), the account (training consent) and the client's provider preferences.
 */
import { GatewayError, text } from "../errors";
import {
  getProvider,
  type CatalogModel,
  type CatalogOffering,
  type CatalogProvider,
  type CatalogSnapshot,
} from "../catalog/types";
import type { ModelResolution } from "../catalog/resolve";
import { priceOffering, type PricedOptions } from "./priced-options";

export interface Candidate {
  readonly model: CatalogModel;
  readonly offering: CatalogOffering;
  readonly provider: CatalogProvider;
}

/**
 * Provider preferences, after OpenRouter's `provider` object (which users already know):
 * - `order`: provider ids to try first, in this order; the others follow in catalog order
 *   unless `allow_fallbacks` is false.
 * - `only`: allowlist of provider ids. `ignore`: blocklist.
 * - `sort`: `price` (cheapest input+output first), `latency` or `throughput` (fastest recent
 *   first-byte time on this instance first; providers without data keep catalog order).
 * - `max_price`: `{ prompt?, completion? }` in USD per million tokens; pricier offerings drop.
 * - `allow_fallbacks` (default true): false tries only the first candidate.
 * - `hedge`: hedged requests on (true) or off (false) for this call, whatever the key says (chat/hedge.ts).
 * - `continue_on_failure`: a stream broken mid-answer is continued by the next candidate (chat/continuation.ts).
 */
export interface ProviderPrefs {
  order?: string[];
  only?: string[];
  ignore?: string[];
  sort?: "price" | "latency" | "throughput";
  max_price?: { prompt?: number; completion?: number };
  allow_fallbacks?: boolean;
  hedge?: boolean;
  continue_on_failure?: boolean;
}

export interface CandidateOptions {
  prefs?: ProviderPrefs;
  /** The account's cross-border training consent. */
  consent: boolean;
  /** A BYOK key's provider: only its offerings are usable. */
  byokProvider: string | null;
  /** Recent first-byte latency per provider in ms (for `sort: latency|throughput`). */
  latencyOf?: (providerId: string) => number | undefined;
  /** Options that change the price (service tier, cache TTL): candidates are priced for them. */
  priced?: PricedOptions;
  /**
   * Whether this deployment may call a provider (configured, or simulated in demo mode /
   * `SIMULATOR=on`); unset: every provider. A BYOK key's own provider always is.
   */
  available?: (provider: CatalogProvider) => boolean;
}

/** Every provider the call could have used is unconfigured on this deployment: 503, before any hold. */
function notConfigured(providers: string[]): GatewayError {
  return new GatewayError(
    "provider_not_configured",
    text(
      `이 배포에 설정되지 않은 제공자입니다: ${providers.join(", ")}. 운영자가 자격 증명을 설정해야 호출할 수 있습니다.`,
      `Providers not configured on this deployment: ${providers.join(", ")}. The operator must set their credentials before they can be called.`,
    ),
    { providers },
  );
}

export function buildCandidates(
  snapshot: CatalogSnapshot,
  resolution: Exclude<ModelResolution, { kind: "policy" }>,
  opts: CandidateOptions,
): Candidate[] {
  let all: Candidate[] = [];
  if (resolution.kind === "leaf") addOfferings(all, snapshot, resolution.model, resolution.offerings);
  else for (const leaf of resolution.candidates) addOfferings(all, snapshot, leaf.model, leaf.offerings);
  if (opts.byokProvider) {
    all = all.filter((c) => c.provider.id === opts.byokProvider);
    if (!all.length)
      throw new GatewayError(
        "byok_not_supported",
        text(
          `BYOK 키의 제공자(${opts.byokProvider})는 이 모델을 제공하지 않습니다.`,
          `The BYOK key's provider (${opts.byokProvider}) does not offer this model.`,
        ),
      );
  }
  const p = opts.prefs ?? NO_PREFS;
  let list = all;
  if (p.only?.length) list = list.filter((c) => p.only!.includes(c.provider.id));
  if (p.ignore?.length) list = list.filter((c) => !p.ignore!.includes(c.provider.id));
  const priced = opts.priced;
  if (priced) {
    // A candidate is copied only when the request's options change its price (usually none is).
    let repriced: Candidate[] | undefined;
    for (let i = 0; i < list.length; i++) {
      const c = list[i]!;
      const offering = priceOffering(c.offering, c.provider, priced);
      if (offering !== c.offering) (repriced ??= list.slice())[i] = { ...c, offering };
    }
    if (repriced) list = repriced;
  }
  if (p.max_price) {
    const { prompt, completion } = p.max_price;
    list = list.filter(
      (c) =>
        (prompt === undefined || c.offering.pricing!.input <= prompt * 1e6) &&
        (completion === undefined || c.offering.pricing!.output <= completion * 1e6),
    );
  }
  if (!list.length) {
    throw new GatewayError(
      "unsupported_parameter",
      text(
        "provider 설정(only/ignore/max_price)을 만족하는 제공자가 없습니다.",
        "No provider satisfies the provider settings (only/ignore/max_price).",
      ),
      {
        providers: [...new Set(all.map((c) => c.provider.id))],
      },
    );
  }
  // Unconfigured providers are no candidates (never simulated outside demo mode, never charged).
  const available = opts.available;
  let unconfigured: Set<string> | undefined;
  // Walked before filtering: every provider is configured on most deployments, and the list is then kept as is.
  if (available && !allAvailable(list, available, opts.byokProvider)) {
    unconfigured = new Set<string>();
    const out = unconfigured;
    list = list.filter((c) => {
      const ok = c.provider.id === opts.byokProvider || available(c.provider);
      if (!ok) out.add(c.provider.id);
      return ok;
    });
    if (!list.length) throw notConfigured([...out]);
  }
  const consented = opts.consent || !list.some(trainsOnData) ? list : list.filter((c) => !c.provider.trainsOnData);
  if (!consented.length) {
    throw new GatewayError("xborder_training_consent_required", undefined, {
      providers: [...new Set(list.filter((c) => c.provider.trainsOnData).map((c) => c.provider.id))],
    });
  }
  list = consented;
  if (p.sort === "price") {
    list = stableSort(list, (c) => c.offering.pricing!.input + c.offering.pricing!.output);
  } else if ((p.sort === "latency" || p.sort === "throughput") && opts.latencyOf) {
    list = stableSort(list, (c) => opts.latencyOf!(c.provider.id) ?? Number.MAX_SAFE_INTEGER);
  }
  if (p.order?.length) {
    const rank = (c: Candidate) => {
      const i = p.order!.indexOf(c.provider.id);
      return i < 0 ? p.order!.length : i;
    };
    list = stableSort(list, rank);
    if (p.allow_fallbacks === false) list = list.filter((c) => p.order!.includes(c.provider.id));
    // The order named only providers this deployment cannot call.
    if (!list.length && unconfigured && p.order.some((id) => unconfigured.has(id)))
      throw notConfigured(p.order.filter((id) => unconfigured.has(id)));
  }
  if (p.allow_fallbacks === false) list = list.slice(0, 1);
  if (!list.length)
    throw new GatewayError(
      "unsupported_parameter",
      text(
        "provider.order에 이 모델을 제공하는 제공자가 없습니다.",
        "No provider in provider.order offers this model.",
      ),
    );
  return list;
}

/** Provider settings of a call that names none: shared, never written to. */
const NO_PREFS: ProviderPrefs = Object.freeze({});

const trainsOnData = (c: Candidate): boolean => !!c.provider.trainsOnData;

/** A loop, not every() with a closure: every call passes here. */
function allAvailable(list: Candidate[], available: (p: CatalogProvider) => boolean, byok: string | null | undefined) {
  for (const c of list) if (c.provider.id !== byok && !available(c.provider)) return false;
  return true;
}

/** The chat offerings of one model, each with its provider, priced ones only. */
function addOfferings(
  all: Candidate[],
  snapshot: CatalogSnapshot,
  model: Candidate["model"],
  offerings: readonly Candidate["offering"][],
) {
  for (const offering of offerings) {
    const provider = getProvider(snapshot, offering.providerId);
    if (provider && provider.kind === "chat" && offering.pricing) all.push({ model, offering, provider });
  }
}

function stableSort<T>(xs: T[], key: (x: T) => number): T[] {
  return xs
    .map((x, i) => ({ x, i, k: key(x) }))
    .sort((a, b) => a.k - b.k || a.i - b.i)
    .map((e) => e.x);
}
