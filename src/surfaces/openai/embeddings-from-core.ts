/** An embeddings outcome → OpenAI's list shape, vectors as float arrays or base64 float32 (little-endian) bytes. */
import type { EmbeddingOutcome } from "../../core/embeddings/types";

export function vectorBase64(v: readonly number[]): string {
  const f = Float32Array.from(v);
  return Buffer.from(f.buffer, f.byteOffset, f.byteLength).toString("base64");
}

export function toEmbeddingList(o: EmbeddingOutcome, format: "float" | "base64" = "float") {
  return {
    object: "list" as const,
    data: o.vectors.map((v, index) => ({
      object: "embedding" as const,
      index,
      embedding: format === "base64" ? vectorBase64(v) : v,
    })),
    model: o.model,
    usage: { prompt_tokens: o.promptTokens, total_tokens: o.promptTokens },
  };
}
