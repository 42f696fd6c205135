/**
 * Which upstreams speak OpenAI's Responses API, so a Responses client's own body (ChatRequest
 * `responses`) may go to them as sent instead of its translation. A provider-level capability:
 * OpenAI's own API (provider `openai`) serves every one of its models on `/v1/responses`; the
 * OpenAI-compatible vendors (DeepSeek, Together, Groq) and the other protocols have no such
 * endpoint, and keep the translation. docs/responses.md, "Relayed or translated".
 */
import type { CatalogProvider } from "../catalog/types";
import { GatewayError, text } from "../errors";

export function speaksResponses(provider: Pick<CatalogProvider, "id" | "protocol">): boolean {
  return provider.protocol === "openai" && provider.id === "openai";
}

/**
 * The candidates a call may use: an offering served on the Responses API only (OpenAI's
 * `-codex` and `-pro` models) only for a call that carries the client's own Responses body.
 * None left of some: a 400 naming the Responses API, before any hold.
 */
export function responsesOnlyCheck<C extends { offering: { responsesOnly?: boolean }; model: { id: string } }>(
  candidates: C[],
  nativeResponses: boolean,
): C[] {
  if (nativeResponses || !candidates.some((c) => c.offering.responsesOnly)) return candidates;
  const usable = candidates.filter((c) => !c.offering.responsesOnly);
  if (usable.length) return usable;
  const model = candidates[0]!.model.id;
  throw new GatewayError(
    "unsupported_parameter",
    text(
      `${model} 모델은 Responses API(POST /v1/responses)로만 호출할 수 있습니다.`,
      `${model} is served on the Responses API only: call it with POST /v1/responses.`,
    ),
    { param: "model" },
  );
}
