/**
 * Request bodies, read only once the caller is known (see ./security.ts) and then under three
 * limits: a size limit enforced while reading (a declared Content-Length over it is refused
 * before reading; a chunked body is cut off once past it, so the excess is never buffered), a
 * deadline for the whole body (a slow sender is answered 408), and a nesting depth for JSON
 * (checked on the bytes before parsing). Malformed JSON is a 400 invalid_request, not a 500.
 */
import { GatewayError, text } from "../core/errors";
import { concatBytes } from "../lib/bytes";
import { jsonDepthExceeds } from "../lib/json-depth";

export interface BodyLimits {
  maxBytes: number;
  /** The whole body must have arrived this long after reading started. */
  timeoutMs: number;
  /** Objects and arrays nested deeper than this are refused (JSON bodies). */
  maxDepth: number;
}

export function tooLarge(): GatewayError {
  return new GatewayError(
    "payload_too_large",
    text("요청 본문이 허용된 크기를 초과했습니다.", "The request body exceeds the allowed size."),
  );
}

const notJson = () =>
  new GatewayError(
    "invalid_request",
    text("요청 본문이 올바른 JSON이 아닙니다.", "The request body is not valid JSON."),
  );

/** Requests whose body was read to its end; any other request with a body still has bytes in flight. */
const readToEnd = new WeakSet<Request>();

/**
 * True when the request announced a body that was not read to its end (refused before
 * reading, or cut off). Its answer must close the connection: otherwise the server would go
 * on receiving (and discarding) whatever the client still sends.
 */
export function bodyLeftUnread(request: Request): boolean {
  if (readToEnd.has(request)) return false;
  return request.headers.has("transfer-encoding") || Number(request.headers.get("content-length") ?? 0) > 0;
}

export async function readLimited(
  request: Request,
  limits: Pick<BodyLimits, "maxBytes" | "timeoutMs">,
): Promise<Uint8Array> {
  const declared = Number(request.headers.get("content-length") ?? NaN);
  if (declared > limits.maxBytes) throw tooLarge();
  if (!request.body) {
    readToEnd.add(request);
    return new Uint8Array(0);
  }
  // The deadline's timer calls the promise's own resolve: no closure for it.
  const { promise: expired, resolve } = Promise.withResolvers<"expired">();
  const timer = setTimeout(resolve, limits.timeoutMs, "expired");
  if (!Number.isNaN(declared)) {
    // A declared length (within the limit, checked above; the server reads no more than it):
    // read natively in one go, under the deadline. The chunk-by-chunk reader below costs a
    // stream read and a race per chunk, which showed as CPU per call on the hot path.
    try {
      const whole = await Promise.race([request.arrayBuffer(), expired]);
      if (whole === "expired") throw new GatewayError("request_timeout");
      readToEnd.add(request);
      return new Uint8Array(whole);
    } finally {
      clearTimeout(timer);
    }
  }
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    for (;;) {
      const next = await Promise.race([reader.read(), expired]);
      if (next === "expired") {
        reader.cancel().catch(() => {});
        throw new GatewayError("request_timeout");
      }
      if (next.done) break;
      size += next.value.byteLength;
      if (size > limits.maxBytes) {
        reader.cancel().catch(() => {});
        throw tooLarge();
      }
      chunks.push(next.value);
    }
  } finally {
    clearTimeout(timer);
  }
  readToEnd.add(request);
  return concatBytes(chunks, size);
}

const decoder = new TextDecoder();

/** JSON bytes → value: empty is undefined, too deep or malformed is a 400. */
function parseJsonBytes(bytes: Uint8Array, maxDepth: number): unknown {
  if (bytes.byteLength === 0) return undefined;
  if (jsonDepthExceeds(bytes, maxDepth)) {
    throw new GatewayError(
      "invalid_request",
      text(
        `요청 본문의 JSON 중첩이 너무 깊습니다 (최대 ${maxDepth}단계).`,
        `The request body's JSON is nested too deeply (at most ${maxDepth} levels).`,
      ),
    );
  }
  try {
    return JSON.parse(decoder.decode(bytes));
  } catch {
    throw notJson();
  }
}

/** A JSON body (by Content-Type, or none given) parsed; any other media type as text. */
export async function readBody(
  request: Request,
  contentType: string | undefined,
  limits: BodyLimits,
): Promise<unknown> {
  const bytes = await readLimited(request, limits);
  if (!contentType || contentType.startsWith("application/json") || contentType.endsWith("+json"))
    return parseJsonBytes(bytes, limits.maxDepth);
  // Other media types: the same limits; the routes take JSON only and their schemas say so.
  return decoder.decode(bytes);
}
