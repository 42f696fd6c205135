/**
 * Gemini embeddings: `POST {baseUrl}/v1beta/models/{model}:embedContent` for one text,
 * `:batchEmbedContents` for several (one request each, answered in order). The API sends no
 * token count, so `promptTokens` is null and the caller counts the input itself. It takes no
 * end-user id: a `user` is left out and reported.
 */
import type {
  CallContext,
  EmbeddingInput,
  EmbeddingOptions,
  EmbeddingProvider,
  EmbeddingResult,
} from "../../core/chat/provider";
import { UpstreamError } from "../../core/upstream/error";
import { joinUrl, postUpstreamJson } from "../common/http";
import { badAnswer } from "../common/errors";
import { droppedIfSet, reported } from "../common/dropped";
import { classifyGeminiError } from "./errors";
import { checkGeminiEmbedResponse } from "./wire";

/** A checked answer, or (the pure mapping being tested alone) one that lacks its vectors. */
type LooseEmbedResponse = { embedding?: { values?: number[] }; embeddings?: Array<{ values?: number[] }> };

function embedRequest(model: string, text: string, opts: EmbeddingOptions): Record<string, unknown> {
  return {
    model: `models/${model}`,
    content: { parts: [{ text }] },
    ...(opts.dimensions !== undefined && { outputDimensionality: opts.dimensions }),
  };
}

/** A response → vectors in input order. Pure. */
export function fromGeminiEmbedResponse(body: LooseEmbedResponse, expected: number): EmbeddingResult {
  const list = body.embeddings ?? (body.embedding ? [body.embedding] : []);
  const vectors = list.map((e) => e?.values);
  if (vectors.length !== expected || !vectors.every(Array.isArray)) {
    throw badAnswer(`upstream returned ${vectors.length} embeddings for ${expected} inputs`, 200, body);
  }
  return { vectors: vectors as number[][], promptTokens: null };
}

export const geminiEmbeddingProvider: EmbeddingProvider = {
  protocol: "gemini",
  tokenInputs: false,
  async embed(
    input: EmbeddingInput[],
    model: string,
    ctx: CallContext,
    opts: EmbeddingOptions = {},
  ): Promise<EmbeddingResult> {
    const texts = input.map((i) => {
      // The service never routes token ids here (tokenInputs: false); a programming error if it did.
      if (typeof i !== "string") throw new UpstreamError("rejected", "Gemini embeddings take text only", 400);
      return i;
    });
    const headers = { "x-goog-api-key": ctx.apiKey };
    const base = `/v1beta/models/${encodeURIComponent(model)}`;
    const single = texts.length === 1;
    const url = joinUrl(ctx.baseUrl, single ? `${base}:embedContent` : `${base}:batchEmbedContents`);
    const payload = reported(ctx, {
      body: single
        ? embedRequest(model, texts[0]!, opts)
        : { requests: texts.map((t) => embedRequest(model, t, opts)) },
      dropped: droppedIfSet(opts, ["user"]),
    });
    return fromGeminiEmbedResponse(
      checkGeminiEmbedResponse(await postUpstreamJson(url, headers, payload, ctx, classifyGeminiError), ctx.providerId),
      texts.length,
    );
  },
};
