/**
 * The embeddings request as OpenAI's wire carries it. `input` is a text, a list of texts, a
 * list of token ids, or a list of those lists, at most 2,048 inputs as OpenAI allows. An
 * empty input (a text, a list or a token list) is refused by `embeddingInputs` with its own
 * 422 issue, which says so in words a union's failure cannot.
 */
import { t } from "elysia";
import { Type } from "@sinclair/typebox";
import { invalid, text } from "../../core/errors";
import type { EmbeddingInput } from "../../core/model/provider";

export const MAX_EMBEDDING_INPUTS = 2048;

const TokenIds = t.Array(Type.Integer({ minimum: 0 }));

export const EmbeddingsBodySchema = t.Object(
  {
    model: t.String({ minLength: 1, maxLength: 200 }),
    input: t.Union([
      t.String(),
      t.Array(t.String(), { maxItems: MAX_EMBEDDING_INPUTS }),
      TokenIds,
      t.Array(TokenIds, { maxItems: MAX_EMBEDDING_INPUTS }),
    ]),
    encoding_format: t.Optional(t.Union([t.Literal("float"), t.Literal("base64")])),
    dimensions: t.Optional(Type.Integer({ minimum: 1 })),
    user: t.Optional(t.String({ maxLength: 256 })),
  },
  { additionalProperties: true },
);

export type EmbeddingsBody = typeof EmbeddingsBodySchema.static;

const EMPTY = text(
  "비어 있으면 안 됩니다. 임베딩할 텍스트나 토큰을 보내세요.",
  "must not be empty: send a text or tokens to embed.",
);

/** The four input forms as a list of inputs (a flat list of numbers is one token-id input); 422 on an empty one. */
export function embeddingInputs(input: EmbeddingsBody["input"]): EmbeddingInput[] {
  if (typeof input === "string" || input.length === 0) {
    if (input.length === 0) throw invalid(["body", "input"], EMPTY, "empty");
    return [input as string];
  }
  if (input.every((x) => typeof x === "number")) return [input as number[]];
  const list = input as EmbeddingInput[];
  const at = list.findIndex((x) => x.length === 0);
  if (at >= 0) throw invalid(["body", "input", at], EMPTY, "empty");
  return list;
}
