/**
 * Which upstreams speak OpenAI's Responses API, so a Responses client's own body (ChatRequest
 * `responses`) may go to them as sent instead of its translation. A provider-level capability:
 * OpenAI's own API (provider `openai`) serves every one of its models on `/v1/responses`; the
 * OpenAI-compatible vendors (DeepSeek, Together, Groq) and the other protocols have no such
 * endpoint, and keep the translation. docs/responses.md, "Relayed or translated".
 */
import type { CatalogProvider } from "../catalog/types";

export function speaksResponses(provider: Pick<CatalogProvider, "id" | "protocol">): boolean {
  return provider.protocol === "openai" && provider.id === "openai";
}
