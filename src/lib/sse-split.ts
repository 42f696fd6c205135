/**
 * Event boundaries of an SSE byte stream, without decoding: for relaying a same-dialect
 * stream byte for byte. Each returned event is a view (no copy) of the bytes as they
 * arrived, blank-line terminator included, so forwarding it reproduces the upstream exactly.
 * Only an event split across two chunks is copied once, to join its halves.
 */

const LF = 0x0a;
const CR = 0x0d;

export class SseSplitter {
  private tail: Uint8Array | null = null;

  /** Feeds a chunk; returns the events it completed, in order. */
  push(chunk: Uint8Array): Uint8Array[] {
    let buf = chunk;
    if (this.tail) {
      buf = new Uint8Array(this.tail.length + chunk.length);
      buf.set(this.tail, 0);
      buf.set(chunk, this.tail.length);
      this.tail = null;
    }
    const out: Uint8Array[] = [];
    let start = 0;
    let i = buf.indexOf(LF);
    while (i !== -1) {
      // A blank line follows this LF: "\n\n" or "\n\r\n".
      let end = -1;
      if (buf[i + 1] === LF) end = i + 2;
      else if (buf[i + 1] === CR && buf[i + 2] === LF) end = i + 3;
      if (end !== -1) {
        out.push(buf.subarray(start, end));
        start = end;
        i = buf.indexOf(LF, end);
      } else {
        i = buf.indexOf(LF, i + 1);
      }
    }
    if (start < buf.length) this.tail = buf.slice(start);
    return out;
  }

  /** Bytes received after the last complete event (a stream that broke off mid-event). */
  rest(): Uint8Array | null {
    return this.tail;
  }
}

const dec = new TextDecoder();

/** The JSON payload of a `data:` event (multi-line data joined), or null. */
function eventData(ev: Uint8Array): string | null {
  const text = dec.decode(ev);
  const lines = text.split(/\r?\n/).filter((l) => l.startsWith("data:"));
  if (!lines.length) return null;
  return lines.map((l) => (l.startsWith("data: ") ? l.slice(6) : l.slice(5))).join("\n");
}

/** The `data:` payload of an event, parsed; null when there is none or it is not JSON (a relay never throws on it). */
export function eventJson(ev: Uint8Array): any {
  try {
    return JSON.parse(eventData(ev) ?? "null");
  } catch {
    return null;
  }
}
