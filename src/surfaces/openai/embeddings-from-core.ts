/**
 * An embeddings outcome → OpenAI's list shape as a byte stream: the envelope written around
 * the spooled vectors (already the client's JSON values, floats or base64 float32), read back
 * 64 KB at a time, so memory per call does not grow with the answer (issue 28, #2). Key order
 * and spelling are OpenAI's:
 * `{"object":"list","data":[{"object":"embedding","index":0,"embedding":…},…],"model":…,"usage":{…}}`.
 */
import type { EmbeddingOutcome } from "../../core/embeddings/types";

const enc = new TextEncoder();
const PIECE = 64 << 10;

const head = enc.encode('{"object":"list","data":[');
const entryHead = (i: number) => enc.encode(`${i ? "," : ""}{"object":"embedding","index":${i},"embedding":`);
const entryTail = enc.encode("}");
const tail = (o: EmbeddingOutcome) =>
  enc.encode(
    `],"model":${JSON.stringify(o.model)},"usage":{"prompt_tokens":${o.promptTokens},"total_tokens":${o.promptTokens}}}`,
  );

/** The answer's bytes; the stream closes the outcome's spool when it ends or is cancelled. */
export function embeddingListStream(o: EmbeddingOutcome): ReadableStream<Uint8Array> {
  const { spool, order } = o;
  let i = -1;
  let from = 0;
  return new ReadableStream<Uint8Array>(
    {
      pull(ctl) {
        try {
          if (i === -1) {
            ctl.enqueue(head);
            i = 0;
            return;
          }
          if (i === order.length) {
            ctl.enqueue(tail(o));
            ctl.close();
            spool.close();
            return;
          }
          const entry = order[i]!;
          const parts: Uint8Array[] = [];
          if (from === 0) parts.push(entryHead(i));
          const piece = spool.read(entry, from, PIECE);
          parts.push(piece);
          from += piece.length;
          if (from >= spool.lengthOf(entry)) {
            parts.push(entryTail);
            i++;
            from = 0;
          }
          ctl.enqueue(parts.length === 1 ? parts[0]! : Buffer.concat(parts));
        } catch (e) {
          spool.close();
          ctl.error(e);
        }
      },
      cancel() {
        spool.close();
      },
    },
    { highWaterMark: 0 },
  );
}
