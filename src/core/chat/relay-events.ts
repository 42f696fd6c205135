/**
 * Reads a raw same-dialect stream (the port: model/relay.ts) to its end: every event the
 * provider's scanner forwards goes to the client at once, byte for byte; the end, or the
 * upstream's failure, is what the scanner said it was.
 */
import { SseSplitter } from "../../lib/sse-split";
import { UpstreamError } from "../upstream/error";
import type { RawRestorer, RawScanner } from "../model/relay";

/** How a relayed read ended: `complete` (the terminal event came) or with `error` (null once the client left). */
export interface RelayEnd {
  complete: boolean;
  error: unknown;
}

/**
 * Reads `body` to its end or failure, handing every event the scanner forwards to `forward` at
 * once; with a `restorer` (a masked call), the events it gives in place of each are scanned and
 * forwarded instead, so the scanner rebuilds the restored answer.
 */
export async function relayEvents(
  body: ReadableStream<Uint8Array>,
  scanner: RawScanner,
  forward: (event: Uint8Array) => void,
  gone: () => boolean,
  restorer?: RawRestorer,
): Promise<RelayEnd> {
  const splitter = new SseSplitter();
  const reader = body.getReader();
  let complete = false;
  let error: unknown = null;
  /** Scans and forwards one event; true once the answer ended or failed. */
  const step = (ev: Uint8Array): boolean => {
    const verdict = scanner.scan(ev);
    if (verdict === "forward") forward(ev);
    else if (verdict === "end") complete = true;
    else if (verdict === "failed") error = scanner.failure;
    return verdict === "end" || verdict === "failed";
  };
  try {
    read: for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      for (const upstream of splitter.push(value)) {
        if (!restorer) {
          if (step(upstream)) break read;
        } else for (const ev of restorer.restore(upstream)) if (step(ev)) break read;
      }
    }
  } catch (e) {
    error = e;
  }
  reader.cancel().catch(() => {});
  if (!complete && !error)
    error = new UpstreamError("truncated", `upstream stream ended without ${scanner.terminator}`);
  // A read cut because the client left is no upstream failure.
  return { complete, error: gone() ? null : error };
}
