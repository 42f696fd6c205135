/**
 * Gemini generateContent wire shapes (only what the adapter reads or writes). The answers the
 * adapter reads whole are TypeBox schemas, checked on arrival (../common/wire-check.ts).
 */
import { Type as T, type Static } from "@sinclair/typebox";
import { Count, wireCheck } from "../common/wire-check";

export type GeminiWirePart =
  | { text: string; thought?: boolean; thoughtSignature?: string }
  | { inlineData: { mimeType: string; data: string } }
  | { fileData: { mimeType?: string; fileUri: string } }
  | { functionCall: { name: string; args?: Record<string, unknown>; id?: string }; thoughtSignature?: string }
  | { functionResponse: { name: string; response: Record<string, unknown>; id?: string } };

export interface GeminiWireContent {
  role: "user" | "model";
  parts: GeminiWirePart[];
}

export const GeminiWireUsage = T.Object({
  promptTokenCount: Count,
  candidatesTokenCount: Count,
  totalTokenCount: Count,
  cachedContentTokenCount: Count,
  thoughtsTokenCount: Count,
  toolUsePromptTokenCount: Count,
});
export type GeminiWireUsage = Static<typeof GeminiWireUsage>;

/** A response part as received: any of these keys may be present. */
const GeminiWireResponsePart = T.Object({
  text: T.Optional(T.String()),
  thought: T.Optional(T.Boolean()),
  functionCall: T.Optional(
    T.Object({ name: T.Optional(T.String()), args: T.Optional(T.Unknown()), id: T.Optional(T.String()) }),
  ),
});
export type GeminiWireResponsePart = Static<typeof GeminiWireResponsePart>;

export const GeminiWireResponse = T.Object({
  candidates: T.Optional(
    T.Array(
      T.Object({
        content: T.Optional(T.Object({ parts: T.Optional(T.Array(GeminiWireResponsePart)) })),
        finishReason: T.Optional(T.String()),
      }),
    ),
  ),
  promptFeedback: T.Optional(T.Object({ blockReason: T.Optional(T.String()) })),
  usageMetadata: T.Optional(GeminiWireUsage),
  responseId: T.Optional(T.String()),
});
/** A stream chunk has the same shape, or carries a mid-stream failure. */
export type GeminiWireResponse = Static<typeof GeminiWireResponse> & { error?: GeminiWireErrorBody["error"] };
export const checkGeminiResponse = wireCheck("generateContent answer", GeminiWireResponse);

export interface GeminiWireErrorBody {
  error?: {
    code?: number;
    message?: string;
    status?: string;
    details?: Array<{ "@type"?: string; retryDelay?: string; reason?: string; [k: string]: unknown }>;
  };
}

/** `embedContent` answers `embedding`; `batchEmbedContents` answers `embeddings`, in request order. */
const GeminiWireEmbedding = T.Object({ values: T.Array(T.Number()) });
export const GeminiWireEmbedResponse = T.Object({
  embedding: T.Optional(GeminiWireEmbedding),
  embeddings: T.Optional(T.Array(GeminiWireEmbedding)),
});
export type GeminiWireEmbedResponse = Static<typeof GeminiWireEmbedResponse>;
