/**
 * The one place video adapters call `fetch`: a deadline per exchange, the caller's signal,
 * and every failure as an `UpstreamError` (status-classified, vendor body kept as detail).
 */
import { UpstreamError } from "../../core/upstream/error";
import type { VideoCall, VideoDownload } from "../../core/video/provider";
import { fetchWithDeadlines, readAllBytes } from "../../lib/http-deadline";
import { badAnswer, toTransportError } from "../common/errors";

export { upstreamHttpError } from "../common/errors";

export { joinUrl } from "../common/http";

export type Classifier = (status: number, headers: Headers, text: string) => UpstreamError;

const utf8 = new TextDecoder();

async function open(url: string, init: RequestInit, call: VideoCall) {
  try {
    return await fetchWithDeadlines(url, init, {
      signal: call.signal,
      firstByteTimeoutMs: call.timeoutMs,
      idleTimeoutMs: call.timeoutMs,
      mapBodyError: (err) => toTransportError(err, "body", call.signal),
    });
  } catch (err) {
    throw toTransportError(err, "connect", call.signal);
  }
}

/** One JSON exchange. A 2xx body that is not JSON is a transient failure. */
export async function requestJson(
  method: "GET" | "POST",
  url: string,
  headers: Record<string, string>,
  payload: unknown,
  call: VideoCall,
  classify: Classifier,
): Promise<unknown> {
  const init: RequestInit = { method, headers: { accept: "application/json", ...headers } };
  if (payload !== undefined) {
    init.body = JSON.stringify(payload);
    (init.headers as Record<string, string>)["content-type"] = "application/json";
  }
  const { response, body } = await open(url, init, call);
  let text: string;
  try {
    text = utf8.decode(await readAllBytes(body));
  } catch (err) {
    const mapped = toTransportError(err, "body", call.signal);
    if (mapped instanceof UpstreamError) throw new UpstreamError("transient", mapped.message, response.status);
    throw mapped;
  }
  if (!response.ok) throw classify(response.status, response.headers, text);
  try {
    return JSON.parse(text);
  } catch {
    throw badAnswer("upstream sent a body that is not JSON", response.status, text.slice(0, 500));
  }
}

/**
 * A streamed GET of a result file, for storage. Redirects are followed by hand so the
 * credential headers go only to the first URL (the vendor's API), not to the signed storage
 * URL it redirects to.
 */
export async function downloadFile(
  url: string,
  headers: Record<string, string>,
  call: VideoCall,
  classify: Classifier,
): Promise<VideoDownload> {
  let target = url;
  let sent = headers;
  for (let hop = 0; ; hop++) {
    const { response, body } = await open(target, { method: "GET", headers: sent, redirect: "manual" }, call);
    const location = response.headers.get("location");
    if (response.status >= 300 && response.status < 400 && location && hop < 5) {
      await body.cancel().catch(() => {});
      target = new URL(location, target).toString();
      sent = {};
      continue;
    }
    if (!response.ok) {
      const text = utf8.decode(await readAllBytes(body).catch(() => new Uint8Array()));
      throw classify(response.status, response.headers, text);
    }
    const len = Number(response.headers.get("content-length"));
    return {
      body,
      contentType: response.headers.get("content-type")?.split(";")[0]?.trim() || "video/mp4",
      size: Number.isFinite(len) && len > 0 ? len : null,
    };
  }
}

/** Reads `obj.a.b.c` of unknown JSON without casts at every step. */
export function dig(obj: unknown, ...path: (string | number)[]): unknown {
  let v: unknown = obj;
  for (const p of path) {
    if (v === null || typeof v !== "object") return undefined;
    v = (v as Record<string | number, unknown>)[p];
  }
  return v;
}

export const str = (v: unknown): string | undefined => (typeof v === "string" ? v : undefined);

/** An upstream 2xx body that does not have the shape the vendor documents. */
export function badShape(what: string, body: unknown): UpstreamError {
  return badAnswer(`upstream ${what} has an unexpected shape`, 200, body);
}
