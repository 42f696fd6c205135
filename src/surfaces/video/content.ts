/**
 * A stored Family G result on the wire: the whole file, or the one byte range asked for (206,
 * RFC 9110), or 416. Several or malformed ranges are ignored (the whole file).
 */
import { GatewayError } from "../../core/errors";
import type { ContentStore } from "../../core/video/ports";
import type { VideoService } from "../../core/video/service";

export type StoredContent = Awaited<ReturnType<VideoService["content"]>>;

/**
 * A single `bytes=` range of a `size`-byte file: [start, end] inclusive, null to serve the
 * whole file (no header, several ranges, or a malformed one: RFC 9110 lets us ignore those),
 * or "unsatisfiable" (416).
 */
export function parseRange(header: string | null, size: number): [number, number] | null | "unsatisfiable" {
  if (!header) return null;
  const match = /^\s*bytes\s*=\s*(\d*)\s*-\s*(\d*)\s*$/i.exec(header);
  if (!match || (match[1] === "" && match[2] === "")) return null;
  if (match[1] === "") {
    const suffix = Number(match[2]);
    if (suffix === 0 || size === 0) return "unsatisfiable";
    return [Math.max(0, size - suffix), size - 1];
  }
  const start = Number(match[1]);
  if (match[2] !== "" && Number(match[2]) < start) return null;
  if (start >= size) return "unsatisfiable";
  return [start, match[2] === "" ? size - 1 : Math.min(Number(match[2]), size - 1)];
}

/** A stored result's bytes from `storage`, with `headers` (the rate-limit counters) added. */
export async function contentResponse(
  request: Request,
  content: StoredContent,
  { storage, headers: extra }: { storage: Pick<ContentStore, "read">; headers: Record<string, string> },
): Promise<Response> {
  const range = parseRange(request.headers.get("range"), content.size);
  if (range === "unsatisfiable") {
    throw new GatewayError("range_not_satisfiable", undefined, {
      headers: { "content-range": `bytes */${content.size}`, "accept-ranges": "bytes" },
    });
  }
  const [start, end] = range ?? [0, content.size - 1];
  const object = await storage.read(content.storageKey, start, end);
  // The row says it exists but the file is gone (deleted by a sweeper elsewhere).
  if (!object) throw new GatewayError("content_expired");
  const headers: Record<string, string> = {
    ...extra,
    "content-type": content.contentType,
    "content-length": String(end - start + 1),
    "accept-ranges": "bytes",
    "cache-control": "private, no-store",
    "content-disposition": `inline; filename="${content.job.id}.mp4"`,
  };
  if (range) headers["content-range"] = `bytes ${start}-${end}/${content.size}`;
  // A local file slice goes out as is (sendfile, exact Content-Length). But Bun.serve
  // applies a Range header on its own to a 200 over a file, so when we chose to ignore
  // the client's Range (several ranges, malformed) the body must be an opaque stream.
  const ignoredRange = !range && request.headers.has("range");
  const bodyOut =
    object.file && !ignoredRange
      ? object.file
      : object.stream().pipeThrough(new TransformStream<Uint8Array, Uint8Array>());
  return new Response(bodyOut, { status: range ? 206 : 200, headers });
}
