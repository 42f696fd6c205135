/** POST /v1/embeddings: parse, authorize, take a call slot, delegate to the embeddings service, stream the answer out. */
import { Elysia } from "elysia";
import type { EmbeddingService } from "../../core/embeddings/service";
import { EmbeddingsBodySchema, embeddingInputs, type EmbeddingsBody } from "../../surfaces/openai/embeddings-schema";
import { embeddingListStream } from "../../surfaces/openai/embeddings-from-core";
import { apiKeyAuth } from "../api-key-auth";
import { warningHeaders } from "../warnings";
import { callerOf } from "../caller";
import type { AppDeps } from "../deps";
import { AUTH } from "../security";
import { errors, ok, withHeaders } from "../openapi/describe";
import { EmbeddingList } from "../../surfaces/openai/schemas";

export function embeddingsRoutes(deps: AppDeps, embeddings: EmbeddingService) {
  return new Elysia({ name: "embeddings", normalize: false }).use(apiKeyAuth(deps.auth)).post(
    "/v1/embeddings",
    async ({ request, body, set, principal }) => {
      using _slot = await deps.calls.take(principal, request);
      const b = body as EmbeddingsBody;
      const caller = callerOf(request, principal);
      const outcome = await embeddings.embed(caller, {
        model: b.model,
        inputs: embeddingInputs(b.input),
        dimensions: b.dimensions,
        user: b.user,
        encoding: b.encoding_format ?? "float",
      });
      set.headers["x-cost-krw"] = String(outcome.cost.krw);
      set.headers["x-cost-usd"] = String(outcome.cost.usd);
      Object.assign(set.headers, warningHeaders(deps.metrics, outcome.warnings, outcome.lifecycle));
      // Written as a stream from the spool: the answer is never one string in memory.
      // A client gone before the body is read (or while) frees the spool's memory and file at once.
      request.signal.addEventListener("abort", () => outcome.spool.close(), { once: true });
      set.headers["content-type"] = "application/json";
      return new Response(embeddingListStream(outcome), { headers: { "content-type": "application/json" } });
    },
    {
      apiKey: "model",
      body: EmbeddingsBodySchema,
      detail: {
        security: AUTH.apiKey,
        tags: ["embeddings"],
        summary: "Embeddings (OpenAI-compatible): vectors for texts or token ids",
        responses: {
          ...withHeaders(
            ok(EmbeddingList, "One embedding per input, in input order"),
            "X-Cost-KRW",
            "X-Cost-USD",
            "X-Gateway-Warnings",
            "Deprecation",
            "Sunset",
            "Link",
          ),
          ...errors(402, 409, 502),
        },
      },
    },
  );
}
