/**
 * The OpenAI-compatible route table and the providers that speak it. DeepSeek, Together
 * and Groq differ from OpenAI in details the gateway does not depend on, so one table
 * serves all four (DeepSeek's extra cache-usage fields are added in openai-chat.ts).
 */
import type { SimRouteTable } from "../routes.ts";
import { handleOpenAIChat } from "./openai-chat.ts";
import { handleOpenAIEmbeddings } from "./openai-embeddings.ts";
import { handleOpenAIResponses } from "./openai-responses.ts";
import { authenticateOpenAI, openAIError } from "./openai-errors.ts";

export const OPENAI_COMPATIBLE_PROVIDERS = ["openai", "deepseek", "together", "groq"] as const;

export const openAICompatibleRoutes: SimRouteTable = {
  protocol: "openai-compatible",
  authenticate: authenticateOpenAI,
  error: openAIError,
  routes: {
    "POST /v1/chat/completions": handleOpenAIChat,
    "POST /v1/embeddings": handleOpenAIEmbeddings,
  },
};

/** OpenAI's Responses API: served by `openai` alone (DeepSeek, Together and Groq have none). */
export const openAIResponsesRoutes: SimRouteTable = {
  protocol: "openai-responses",
  authenticate: authenticateOpenAI,
  error: openAIError,
  routes: { "POST /v1/responses": handleOpenAIResponses },
};
