/** The Gemini route table (provider `google`), under both API versions. */
import type { SimRouteTable } from "../routes.ts";
import { authenticateGemini, geminiError } from "./gemini-errors.ts";
import { handleGeminiBatchEmbed, handleGeminiEmbed } from "./gemini-embed.ts";
import { handleGeminiGenerate, handleGeminiStream } from "./gemini-generate.ts";

export const geminiRoutes: SimRouteTable = {
  protocol: "gemini",
  authenticate: authenticateGemini,
  error: geminiError,
  routes: {
    "POST /v1beta/models/{model}:generateContent": handleGeminiGenerate,
    "POST /v1beta/models/{model}:streamGenerateContent": handleGeminiStream,
    "POST /v1/models/{model}:generateContent": handleGeminiGenerate,
    "POST /v1/models/{model}:streamGenerateContent": handleGeminiStream,
    "POST /v1beta/models/{model}:embedContent": handleGeminiEmbed,
    "POST /v1beta/models/{model}:batchEmbedContents": handleGeminiBatchEmbed,
    "POST /v1/models/{model}:embedContent": handleGeminiEmbed,
    "POST /v1/models/{model}:batchEmbedContents": handleGeminiBatchEmbed,
  },
};
