/**
 * Gemini embeddings: `POST {baseUrl}/v1beta/models/{model}:embedContent` for one text,
 * `:batchEmbedContents` for several (one request each, answered in order). The API sends no
 * token count, so `promptTokens` is null and the caller counts the input itself. It takes no
 * end-user id: a `user` is left out and reported. The answer is read as it arrives, never
 * whole (common/embed-scan.ts).
 */
import type {
  CallContext,
  EmbeddingInput,
  EmbeddingOptions,
  EmbeddingProvider,
  EmbeddingResult,
  EmbeddingSink,
  EmbeddingStreamResult,
} from "../../core/model/provider";
import { EmbedScanner, maxVectorBytes, scanBody, type ScanPlan } from "../common/embed-scan";
import { collectVectors, orderOf } from "../common/embed-collect";
import { UpstreamError } from "../../core/upstream/error";
import { joinUrl, postUpstream } from "../common/http";
import { badAnswer } from "../common/errors";
import { droppedIfSet, reported } from "../common/dropped";
import { classifyGeminiError } from "./errors";

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

/** Where Gemini's answers keep the vectors: `embedding.values` (one), `embeddings[i].values` (a batch). */
const GEMINI_EMBED_PLAN: ScanPlan = {
  vector: (p) =>
    (p.length === 2 && p[0] === "embedding" && p[1] === "values") ||
    (p.length === 3 && p[0] === "embeddings" && p[2] === "values"),
  keep: () => false,
};

export const geminiEmbeddingProvider: EmbeddingProvider = {
  protocol: "gemini",
  tokenInputs: false,
  embed(input, model, ctx, opts = {}) {
    return collectVectors(geminiEmbeddingProvider.embedTo, input, model, ctx, opts);
  },
  async embedTo(
    input: EmbeddingInput[],
    model: string,
    ctx: CallContext,
    opts: EmbeddingOptions,
    sink: EmbeddingSink,
  ): Promise<EmbeddingStreamResult> {
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
    // Read as it arrives (issue 28, #2): floats pass through, or become base64 one vector at a time.
    const opened = await postUpstream(url, headers, payload, ctx, classifyGeminiError);
    const scanner = new EmbedScanner(GEMINI_EMBED_PLAN, sink, maxVectorBytes(opts.dimensions), "float");
    await scanBody(opened.body, scanner);
    const order = orderOf(
      scanner.vectors.map((v) => ({
        index: single ? (v.path[0] === "embedding" ? 0 : -1) : v.path[0] === "embeddings" ? v.path[1] : -1,
        arrival: v.arrival,
      })),
      texts.length,
    );
    return { order, promptTokens: null };
  },
};
