/**
 * OpenAI Embeddings (`POST /v1/embeddings`): deterministic trigram vectors (embed-vector.ts)
 * in OpenAI's list shape, as floats or, with `encoding_format: "base64"` (the OpenAI SDK's
 * default), as base64 float32 bytes.
 */
import { obeyDirectives } from "../directive-effects.ts";
import { parseDirectives } from "../directives.ts";
import { DEFAULT_EMBEDDING_DIMS, embedText, vectorToBase64 } from "../embed-vector.ts";
import { readJsonBody } from "../http.ts";
import type { SimContext } from "../routes.ts";
import { countTokens } from "../tokens.ts";
import { openAIError } from "./openai-errors.ts";

interface OpenAIEmbeddingsRequest {
  model?: unknown;
  input?: unknown;
  dimensions?: unknown;
  encoding_format?: unknown;
}

export async function handleOpenAIEmbeddings(ctx: SimContext): Promise<Response> {
  const { raw, body } = await readJsonBody<OpenAIEmbeddingsRequest>(ctx);
  if (typeof body.model !== "string" || body.model === "") {
    return openAIError(400, "you must provide a model parameter", { param: "model" });
  }
  const inputs = embeddingInputs(body.input);
  if (!inputs) {
    return openAIError(400, "'input' must be a string, an array of strings, or an array of token arrays.", {
      param: "input",
    });
  }
  const dims = body.dimensions === undefined ? DEFAULT_EMBEDDING_DIMS : Number(body.dimensions);
  if (!Number.isInteger(dims) || dims < 1 || dims > 4096) {
    return openAIError(400, "'dimensions' must be an integer between 1 and 4096.", { param: "dimensions" });
  }
  // An embeddings call has no "last user message": directives may sit in any input text.
  const early = await obeyDirectives(ctx, parseDirectives(inputs.map((i) => i.text).join("\n")), raw);
  if (early) return early;

  const base64 = body.encoding_format === "base64";
  let tokens = 0;
  const data = inputs.map((input, index) => {
    tokens += input.tokens;
    const v = embedText(input.text, dims);
    return { object: "embedding", index, embedding: base64 ? vectorToBase64(v) : Array.from(v) };
  });
  return Response.json({
    object: "list",
    data,
    model: body.model,
    usage: { prompt_tokens: tokens, total_tokens: tokens },
  });
}

interface EmbeddingInput {
  text: string;
  tokens: number;
}

/** Normalizes the four accepted input forms; token arrays embed their ids as text. */
function embeddingInputs(input: unknown): EmbeddingInput[] | undefined {
  const one = (x: unknown): EmbeddingInput | undefined => {
    if (typeof x === "string") return { text: x, tokens: countTokens(x) };
    if (Array.isArray(x) && x.every((n) => typeof n === "number")) return { text: x.join(" "), tokens: x.length };
    return undefined;
  };
  if (typeof input === "string") return [one(input)!];
  if (!Array.isArray(input) || input.length === 0) return undefined;
  if (input.every((n) => typeof n === "number")) return [one(input)!];
  const all = input.map(one);
  return all.every((x) => x !== undefined) ? (all as EmbeddingInput[]) : undefined;
}
