/**
 * A policy's `routing_prefs` and the request's own `provider` object, combined: restrictions
 * add up (`only` is intersected, `ignore` united, the lower `max_price` wins), while choices
 * of order (`order`, `sort`, `allow_fallbacks`) are the request's when it makes them. So a
 * policy owner can keep calls off a provider, and a caller can still reorder within that.
 */
import type { ProviderPrefs } from "./candidates";
import type { RoutingPrefs } from "./config-schema";

export function mergePrefs(
  policy: RoutingPrefs | undefined,
  request: ProviderPrefs | undefined,
): ProviderPrefs | undefined {
  if (!policy) return request;
  if (!request) return policy;
  const out: ProviderPrefs = { ...policy, ...request };
  if (policy.only?.length && request.only?.length) out.only = policy.only.filter((p) => request.only!.includes(p));
  else out.only = policy.only?.length ? policy.only : request.only;
  if (out.only && !out.only.length) out.only = ["(none)"]; // an empty intersection allows nothing
  if (policy.ignore?.length || request.ignore?.length)
    out.ignore = [...new Set([...(policy.ignore ?? []), ...(request.ignore ?? [])])];
  if (policy.max_price || request.max_price) {
    out.max_price = {
      prompt: minDefined(policy.max_price?.prompt, request.max_price?.prompt),
      completion: minDefined(policy.max_price?.completion, request.max_price?.completion),
    };
  }
  return out;
}

function minDefined(a: number | undefined, b: number | undefined): number | undefined {
  return a === undefined ? b : b === undefined ? a : Math.min(a, b);
}
