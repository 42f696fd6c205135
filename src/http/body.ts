/**
 * Request bodies with a size limit. A declared Content-Length over the limit is refused
 * before reading; a chunked body is read only up to the limit, so the excess is never
 * buffered. Malformed JSON is a 400 invalid_request, not a 500.
 */
import { GatewayError } from "../core/errors";
import { concatBytes } from "../lib/bytes";

export function tooLarge(): GatewayError {
  return new GatewayError("payload_too_large", "요청 본문이 허용된 크기를 초과했습니다.");
}

export async function readLimited(request: Request, limit: number): Promise<Uint8Array> {
  const declared = Number(request.headers.get("content-length") ?? NaN);
  if (declared > limit) throw tooLarge();
  if (!request.body) return new Uint8Array(0);
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      reader.cancel().catch(() => {});
      throw tooLarge();
    }
    chunks.push(value);
  }
  return concatBytes(chunks, size);
}

const decoder = new TextDecoder();

export async function readJson(request: Request, limit: number): Promise<unknown> {
  const bytes = await readLimited(request, limit);
  if (bytes.byteLength === 0) return undefined;
  try {
    return JSON.parse(decoder.decode(bytes));
  } catch {
    throw new GatewayError("invalid_request", "요청 본문이 올바른 JSON이 아닙니다.");
  }
}
