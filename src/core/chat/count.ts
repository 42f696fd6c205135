/**
 * A provider's own count of a request's input tokens (count_tokens), where its protocol offers
 * one free (Anthropic). A prompt holding personal data the key masks is counted masked, as the
 * call itself sends it (the client's own body masked in place, pii-native.ts): the provider
 * never sees the values, and the count is the input the call then reports. Any failure (refusal, timeout, a credential that cannot be opened) gives null: the caller
 * answers the gateway's own estimate instead.
 */
import type { KeyPrincipal } from "../auth/principal";
import type { Candidate } from "../routing/candidates";
import type { ChatDeps } from "./ports";
import type { Protocol } from "../model/provider";
import type { ChatRequest } from "../model/types";

export async function providerCount(
  d: ChatDeps,
  p: KeyPrincipal,
  c: Candidate,
  request: Omit<ChatRequest, "model">,
  signal?: AbortSignal,
): Promise<number | null> {
  const provider = d.providerFor(c.provider.protocol as Protocol);
  if (!provider.countTokens) return null;
  const sent = p.piiMaskingEnabled && d.pii ? d.pii.maskRequest(request).request : request;
  try {
    const ep = d.upstreamFor(c.provider, p);
    const ctx = {
      providerId: c.provider.id,
      baseUrl: ep.baseUrl,
      apiKey: ep.apiKey,
      signal,
      firstByteTimeoutMs: d.firstByteTimeoutMs,
      idleTimeoutMs: d.idleTimeoutMs,
    };
    return await provider.countTokens({ ...sent, model: c.offering.upstreamId }, ctx);
  } catch {
    return null;
  }
}
