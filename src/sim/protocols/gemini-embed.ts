/**
 * Gemini `models/{model}:embedContent` and `:batchEmbedContents`: deterministic trigram
 * vectors (embed-vector.ts) as `{embedding: {values}}` or `{embeddings: [{values}, ...]}`.
 * Like the real API, no token count comes back. `outputDimensionality` sizes the vectors.
 */
import { obeyDirectives } from "../directive-effects.ts";
import { parseDirectives } from "../directives.ts";
import { DEFAULT_EMBEDDING_DIMS, embedText } from "../embed-vector.ts";
import { readJsonBody } from "../http.ts";
import type { SimContext } from "../routes.ts";
import { geminiError } from "./gemini-errors.ts";

interface EmbedRequest {
  model?: unknown;
  content?: { parts?: Array<{ text?: unknown }> };
  outputDimensionality?: unknown;
}

/** The request's text and size, or the 400 Google sends for it. */
function parseRequest(r: EmbedRequest | undefined, at: string): { text: string; dims: number } | Response {
  const parts = r?.content?.parts;
  if (!Array.isArray(parts) || parts.length === 0 || !parts.every((p) => typeof p?.text === "string")) {
    return geminiError(400, `* ${at}content: contents must not be empty`);
  }
  const dims = r!.outputDimensionality === undefined ? DEFAULT_EMBEDDING_DIMS : Number(r!.outputDimensionality);
  if (!Number.isInteger(dims) || dims < 1 || dims > 3072)
    return geminiError(400, `* ${at}output_dimensionality: must be between 1 and 3072`);
  return { text: parts.map((p) => p.text as string).join(""), dims };
}

const values = (r: { text: string; dims: number }) => ({ values: Array.from(embedText(r.text, r.dims)) });

export async function handleGeminiEmbed(ctx: SimContext): Promise<Response> {
  const { raw, body } = await readJsonBody<EmbedRequest>(ctx);
  const r = parseRequest(body, "");
  if (r instanceof Response) return r;
  const early = await obeyDirectives(ctx, parseDirectives(r.text), raw);
  if (early) return early;
  return Response.json({ embedding: values(r) });
}

export async function handleGeminiBatchEmbed(ctx: SimContext): Promise<Response> {
  const { raw, body } = await readJsonBody<{ requests?: EmbedRequest[] }>(ctx);
  const requests = body.requests;
  if (!Array.isArray(requests) || requests.length === 0) return geminiError(400, "* requests: must not be empty");
  const parsed = [];
  for (const [i, req] of requests.entries()) {
    // Every request of a batch names the model of the path, as Google requires.
    if (req?.model !== `models/${ctx.params.model}`)
      return geminiError(400, `* requests[${i}].model: must be models/${ctx.params.model}`);
    const r = parseRequest(req, `requests[${i}].`);
    if (r instanceof Response) return r;
    parsed.push(r);
  }
  const early = await obeyDirectives(ctx, parseDirectives(parsed.map((p) => p.text).join("\n")), raw);
  if (early) return early;
  return Response.json({ embeddings: parsed.map(values) });
}
