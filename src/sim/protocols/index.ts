/**
 * The built-in protocols and the providers that speak them (docs/decisions.md #13). Other
 * protocols (video task APIs, web search) call `registerSimRoutes` themselves.
 */
import { registerSimRoutes } from "../routes.ts";
import { anthropicRoutes } from "./anthropic.ts";
import { geminiRoutes } from "./gemini.ts";
import { OPENAI_COMPATIBLE_PROVIDERS, openAICompatibleRoutes, openAIResponsesRoutes } from "./openai-compatible.ts";
import { registerVideoSimRoutes } from "./video.ts";
import { braveSearchRoutes } from "./brave-search.ts";
import { paymentRoutes } from "./payments.ts";

let registered = false;

/** Registers the chat and embeddings protocols once per process. */
export function registerBuiltinSimRoutes(): void {
  if (registered) return;
  registered = true;
  for (const provider of OPENAI_COMPATIBLE_PROVIDERS) registerSimRoutes(provider, openAICompatibleRoutes);
  registerSimRoutes("openai", openAIResponsesRoutes);
  registerSimRoutes("anthropic", anthropicRoutes);
  registerSimRoutes("google", geminiRoutes);
  registerVideoSimRoutes();
  registerSimRoutes("brave", braveSearchRoutes);
  registerSimRoutes("payments", paymentRoutes);
}
