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

const enc = new TextEncoder();
const DONE_1 = enc.encode("data: [DONE]");
const DONE_2 = enc.encode("data:[DONE]");
const ERROR_1 = enc.encode('data: {"error"');
const ERROR_2 = enc.encode('data:{"error"');
const USAGE = enc.encode('"usage"');

function startsWith(b: Uint8Array, p: Uint8Array): boolean {
  if (b.length < p.length) return false;
  for (let i = 0; i < p.length; i++) if (b[i] !== p[i]) return false;
  return true;
}

function indexOfSeq(b: Uint8Array, p: Uint8Array, from = 0): number {
  const first = p[0]!;
  for (let i = b.indexOf(first, from); i !== -1 && i <= b.length - p.length; i = b.indexOf(first, i + 1)) {
    let ok = true;
    for (let j = 1; j < p.length; j++)
      if (b[i + j] !== p[j]) {
        ok = false;
        break;
      }
    if (ok) return i;
  }
  return -1;
}

export type OpenAIEventKind = "done" | "error" | "usage" | "chunk";

/**
 * Classifies one OpenAI chat stream event by its bytes: `[DONE]`, an error payload, the
 * usage chunk (a `"usage"` key whose value is an object, not null), or an ordinary chunk.
 */
export function classifyOpenAIEvent(ev: Uint8Array): OpenAIEventKind {
  if (startsWith(ev, DONE_1) || startsWith(ev, DONE_2)) return "done";
  if (startsWith(ev, ERROR_1) || startsWith(ev, ERROR_2)) return "error";
  let i = indexOfSeq(ev, USAGE);
  while (i !== -1) {
    let j = i + USAGE.length;
    while (ev[j] === 0x20 || ev[j] === 0x09) j++;
    if (ev[j] === 0x3a) {
      j++;
      while (ev[j] === 0x20 || ev[j] === 0x09) j++;
      if (ev[j] === 0x7b) return "usage";
    }
    i = indexOfSeq(ev, USAGE, i + 1);
  }
  return "chunk";
}

const dec = new TextDecoder();

/** The JSON payload of a `data:` event (multi-line data joined), or null. */
export function eventData(ev: Uint8Array): string | null {
  const text = dec.decode(ev);
  const lines = text.split(/\r?\n/).filter((l) => l.startsWith("data:"));
  if (!lines.length) return null;
  return lines.map((l) => (l.startsWith("data: ") ? l.slice(6) : l.slice(5))).join("\n");
}
