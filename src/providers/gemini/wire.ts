/** Gemini generateContent wire shapes (only what the adapter reads or writes). */

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

export interface GeminiWireUsage {
  promptTokenCount?: number;
  candidatesTokenCount?: number;
  totalTokenCount?: number;
  cachedContentTokenCount?: number;
  thoughtsTokenCount?: number;
  toolUsePromptTokenCount?: number;
}

/** A response part as received: any of these keys may be present. */
export interface GeminiWireResponsePart {
  text?: string;
  thought?: boolean;
  thoughtSignature?: string;
  functionCall?: { name?: string; args?: unknown; id?: string };
}

export interface GeminiWireResponse {
  candidates?: Array<{
    content?: { role?: string; parts?: GeminiWireResponsePart[] };
    finishReason?: string;
    index?: number;
  }>;
  promptFeedback?: { blockReason?: string };
  usageMetadata?: GeminiWireUsage;
  responseId?: string;
  /** A mid-stream failure. */
  error?: GeminiWireErrorBody["error"];
}

export interface GeminiWireErrorBody {
  error?: {
    code?: number;
    message?: string;
    status?: string;
    details?: Array<{ "@type"?: string; retryDelay?: string; reason?: string; [k: string]: unknown }>;
  };
}

/** `embedContent` answers `embedding`; `batchEmbedContents` answers `embeddings`, in request order. */
export interface GeminiWireEmbedResponse {
  embedding?: { values?: number[] };
  embeddings?: Array<{ values?: number[] }>;
}
