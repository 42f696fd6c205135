/**
 * Adapters' `embedTo` (vectors streamed to a sink) read back as numbers: for callers that
 * want a few small vectors in memory (the semantic cache, the conformance suite), never for
 * a client's answer.
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
import { badAnswer } from "./errors";

export async function collectVectors(
  embedTo: EmbeddingProvider["embedTo"],
  input: EmbeddingInput[],
  model: string,
  ctx: CallContext,
  opts: EmbeddingOptions = {},
): Promise<EmbeddingResult> {
  const done: string[] = [];
  let cur = "";
  const dec = new TextDecoder();
  const sink: EmbeddingSink = {
    encoding: "float",
    write: (b) => void (cur += dec.decode(b, { stream: true })),
    end: () => {
      done.push(cur + dec.decode());
      cur = "";
      return done.length - 1;
    },
  };
  const r: EmbeddingStreamResult = await embedTo(input, model, ctx, opts, sink);
  const vectors = r.order.map((a) => JSON.parse(done[a]!) as number[]);
  if (!vectors.every((v) => Array.isArray(v)))
    throw badAnswer("an embedding that is not a list of numbers", 200, undefined);
  return { vectors, promptTokens: r.promptTokens };
}

/** Arrival numbers in input order from each vector's index, or a bad answer (a missing, repeated or stray index, a wrong count). */
export function orderOf(indexes: { index: unknown; arrival: number }[], expected: number): number[] {
  const order: number[] = new Array(expected).fill(-1);
  for (const { index, arrival } of indexes) {
    if (typeof index !== "number" || !Number.isInteger(index) || index < 0 || index >= expected || order[index] !== -1)
      throw badAnswer(
        `upstream returned an embedding with a wrong or repeated index (${String(index)})`,
        200,
        undefined,
      );
    order[index] = arrival;
  }
  if (indexes.length !== expected)
    throw badAnswer(`upstream returned ${indexes.length} embeddings for ${expected} inputs`, 200, undefined);
  return order;
}
