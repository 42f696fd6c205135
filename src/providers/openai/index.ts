/**
 * OpenAI-compatible adapter (OpenAI, DeepSeek, Together, Groq): `POST {baseUrl}/v1/chat/completions`
 * with `Authorization: Bearer`, and `POST {baseUrl}/v1/embeddings`. A call carrying the client's
 * own Responses body (`req.responses`, only ever for OpenAI itself: core/chat/responses-native.ts)
 * goes to `POST {baseUrl}/v1/responses` instead (responses.ts); its stream is relayed.
 */
import type {
  CallContext,
  ChatProvider,
  EmbeddingInput,
  EmbeddingOptions,
  EmbeddingProvider,
  EmbeddingResult,
  EmbeddingSink,
  EmbeddingStreamResult,
} from "../../core/model/provider";
import { EmbedScanner, maxVectorBytes, scanBody, type ScanPlan } from "../common/embed-scan";
import { collectVectors, orderOf } from "../common/embed-collect";
import { badAnswer } from "../common/errors";
import type { ChatRequest, ChatResult, StreamEvent } from "../../core/model/types";
import { decodeSse } from "../../lib/sse";
import { joinUrl, postUpstream, postUpstreamJson } from "../common/http";
import { classifyOpenAIError } from "./errors";
import { buildOpenAIChatRequest, usesOpenAIMaxCompletionTokens } from "./request";
import { reported } from "../common/dropped";
import { fromOpenAIChatResponse } from "./response";
import { readOpenAIChatStream } from "./stream";
import { OpenAIRawScanner } from "./relay";
import { OpenAIRawRestorer } from "./relay-restore";
import { fromResponsesObject, responsesBody, ResponsesRawScanner } from "./responses";
import { ResponsesRawRestorer } from "./responses-restore";
import { checkOpenAIChatResponse, type OpenAIWireEmbeddingResponse } from "./wire";

function openAIHeaders(ctx: CallContext, stream: boolean): Record<string, string> {
  const h: Record<string, string> = { authorization: `Bearer ${ctx.apiKey}` };
  if (stream) h.accept = "text/event-stream";
  return h;
}

/** The request body; what it leaves out goes to `ctx.warn`. */
function buildBody(req: ChatRequest, ctx: CallContext, stream: boolean): Record<string, unknown> {
  const built = buildOpenAIChatRequest(req, {
    stream,
    forwardServiceTier: ctx.forwardServiceTier === true,
    useMaxCompletionTokens: usesOpenAIMaxCompletionTokens(ctx.providerId, req.model),
  });
  return reported(ctx, built);
}

async function openOpenAIStream(req: ChatRequest, ctx: CallContext): Promise<ReadableStream<Uint8Array>> {
  const url = joinUrl(ctx.baseUrl, req.responses ? "/v1/responses" : "/v1/chat/completions");
  const sent = req.responses ? responsesBody(req, true) : buildBody(req, ctx, true);
  const { body } = await postUpstream(url, openAIHeaders(ctx, true), sent, ctx, classifyOpenAIError);
  return body;
}

/** Without the client's Responses body: a typed stream is read as chat (the translation). */
function asChat(req: ChatRequest): ChatRequest {
  if (!req.responses) return req;
  const { responses: _, ...rest } = req;
  return rest;
}

export const openAIChatProvider: ChatProvider = {
  protocol: "openai",

  async chat(req: ChatRequest, ctx: CallContext): Promise<ChatResult> {
    if (req.responses) {
      const url = joinUrl(ctx.baseUrl, "/v1/responses");
      const body = (await postUpstreamJson(
        url,
        openAIHeaders(ctx, false),
        responsesBody(req, false),
        ctx,
        classifyOpenAIError,
      )) as Record<string, unknown>;
      const result = fromResponsesObject(body);
      result.vendorBody = body;
      return result;
    }
    const url = joinUrl(ctx.baseUrl, "/v1/chat/completions");
    return fromOpenAIChatResponse(
      checkOpenAIChatResponse(
        await postUpstreamJson(url, openAIHeaders(ctx, false), buildBody(req, ctx, false), ctx, classifyOpenAIError),
        ctx.providerId,
      ),
    );
  },

  async chatStream(req: ChatRequest, ctx: CallContext): Promise<AsyncIterable<StreamEvent>> {
    const body = await openOpenAIStream(asChat(req), ctx);
    return readOpenAIChatStream(decodeSse(body));
  },

  /**
   * The raw SSE bytes after a 200, for a byte-for-byte relay. The request always asks for
   * `include_usage`. Deadlines and caller abort apply; body errors are UpstreamErrors. The
   * relay scans the bytes with `rawScanner` for usage, errors and `[DONE]`.
   */
  openRawStream: openOpenAIStream,
  rawScanner: (req) => (req.responses ? new ResponsesRawScanner() : new OpenAIRawScanner()),
  rawRestorer: (mapping, req) => (req.responses ? new ResponsesRawRestorer(mapping) : new OpenAIRawRestorer(mapping)),
};

/** Where OpenAI's answer keeps the vectors (`data[i].embedding`), their indexes and the usage. */
const OPENAI_EMBED_PLAN: ScanPlan = {
  vector: (p) => p.length === 3 && p[0] === "data" && p[2] === "embedding",
  keep: (p) => (p.length === 3 && p[0] === "data" && p[2] === "index") || (p.length === 1 && p[0] === "usage"),
};

export const openAIEmbeddingProvider: EmbeddingProvider = {
  protocol: "openai",
  tokenInputs: true,
  embed(input, model, ctx, opts = {}) {
    return collectVectors(openAIEmbeddingProvider.embedTo, input, model, ctx, opts);
  },
  async embedTo(
    input: EmbeddingInput[],
    model: string,
    ctx: CallContext,
    opts: EmbeddingOptions,
    sink: EmbeddingSink,
  ): Promise<EmbeddingStreamResult> {
    const url = joinUrl(ctx.baseUrl, "/v1/embeddings");
    // The client's encoding on the wire: base64 vectors pass through as they came (issue 28, #2).
    const body = {
      model,
      input,
      encoding_format: sink.encoding,
      ...(opts.dimensions !== undefined && { dimensions: opts.dimensions }),
      ...(opts.user !== undefined && { user: opts.user }),
    };
    const opened = await postUpstream(url, openAIHeaders(ctx, false), body, ctx, classifyOpenAIError);
    const scanner = new EmbedScanner(OPENAI_EMBED_PLAN, sink, maxVectorBytes(opts.dimensions), sink.encoding);
    await scanBody(opened.body, scanner);
    const order = orderOf(
      scanner.vectors.map((v) => ({
        index: scanner.kept.get(`data/${v.path[1]}/index`) ?? v.path[1],
        arrival: v.arrival,
      })),
      input.length,
    );
    const usage = scanner.kept.get("usage") as { prompt_tokens?: unknown } | undefined;
    const tokens = usage?.prompt_tokens;
    return {
      order,
      promptTokens: typeof tokens === "number" && Number.isInteger(tokens) && tokens >= 0 ? tokens : null,
    };
  },
};

/** Embeddings body → vectors in input order (sorted by `index`). Pure. */
export function fromOpenAIEmbeddingResponse(body: OpenAIWireEmbeddingResponse, expected: number): EmbeddingResult {
  const data = [...body.data].sort((a, b) => (a.index ?? 0) - (b.index ?? 0));
  const vectors = data.map((d) => d.embedding);
  if (vectors.length !== expected) {
    throw badAnswer(`upstream returned ${vectors.length} embeddings for ${expected} inputs`, 200, body);
  }
  return { vectors, promptTokens: body.usage?.prompt_tokens ?? null };
}

export { toOpenAIChatRequest, mapOpenAIReasoningEffort, usesOpenAIMaxCompletionTokens } from "./request";
export { fromOpenAIChatResponse, mapOpenAIFinishReason, mapOpenAIUsage } from "./response";
export { readOpenAIChatStream } from "./stream";
export { classifyOpenAIEvent, OpenAIRawScanner } from "./relay";
export { OpenAIRawRestorer } from "./relay-restore";
export { classifyOpenAIError, classifyOpenAIStreamError } from "./errors";
