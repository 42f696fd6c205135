/**
 * Server-sent events: one decoder for every upstream stream, plus a tiny encoder.
 *
 * The decoder works on bytes. It scans each chunk for line terminators (LF, CRLF or a lone
 * CR, in any mix, split anywhere across chunks) and decodes one *completed* line at a time,
 * so a multi-byte UTF-8 character split across chunks is never decoded in halves and the
 * buffered input is never re-decoded or re-scanned.
 *
 * Framing follows the WHATWG EventSource parsing rules: `field: value` lines (one space
 * after the colon is dropped), `:` comment lines ignored, several `data:` lines joined with
 * `\n`, an event dispatched at a blank line, blocks without `data` not dispatched, a leading
 * UTF-8 BOM dropped, `retry` and unknown fields ignored.
 *
 * Deliberate deviation: the spec discards an event that is not followed by a blank line when
 * the stream ends. {@link SseDecoder.end} (called only when the body ended cleanly, never after
 * a read error) still dispatches that last event, because some upstreams omit the final blank
 * line (for example a bare `data: [DONE]` at EOF). A stream that broke off in the middle of a
 * JSON payload therefore yields a final event with unparsable data: adapters treat that as a
 * truncated stream.
 */

/** One decoded event. `event` and `id` are present only when the event block set them. */
export interface SseEvent {
  event?: string;
  data: string;
  id?: string;
}

const LF = 0x0a;
const CR = 0x0d;
const EMPTY = new Uint8Array(0);

/** Incremental SSE decoder: push byte chunks, get completed events. */
export class SseDecoder {
  private readonly utf8 = new TextDecoder("utf-8");
  /** Bytes of the line currently being received (incomplete), in arrival order. */
  private pending: Uint8Array[] = [];
  /** The previous chunk ended in CR: a LF at the start of the next chunk belongs to it. */
  private skipLf = false;
  private firstLine = true;
  private data: string[] = [];
  private eventName: string | undefined;
  private eventId: string | undefined;

  /** Feeds one chunk (any split) and returns the events it completed, in order. */
  push(chunk: Uint8Array): SseEvent[] {
    const out: SseEvent[] = [];
    let start = 0;
    const n = chunk.length;
    if (this.skipLf && n > 0) {
      if (chunk[0] === LF) start = 1;
      this.skipLf = false;
    }
    for (let i = start; i < n; i++) {
      const b = chunk[i];
      if (b !== LF && b !== CR) continue;
      this.completeLine(chunk.subarray(start, i), out);
      if (b === CR) {
        if (i + 1 < n) {
          if (chunk[i + 1] === LF) i++;
        } else {
          this.skipLf = true;
        }
      }
      start = i + 1;
    }
    if (start < n) this.pending.push(chunk.slice(start));
    return out;
  }

  /**
   * Call when the byte stream ended cleanly: processes an unterminated last line and
   * dispatches a last event that had no trailing blank line (see the module comment).
   */
  end(): SseEvent[] {
    const out: SseEvent[] = [];
    if (this.pending.length > 0) this.completeLine(EMPTY, out);
    this.processLine("", out);
    this.skipLf = false;
    return out;
  }

  private completeLine(tail: Uint8Array, out: SseEvent[]): void {
    let bytes = tail;
    if (this.pending.length > 0) {
      let len = tail.length;
      for (const p of this.pending) len += p.length;
      bytes = new Uint8Array(len);
      let off = 0;
      for (const p of this.pending) {
        bytes.set(p, off);
        off += p.length;
      }
      bytes.set(tail, off);
      this.pending = [];
    }
    let line = bytes.length === 0 ? "" : this.utf8.decode(bytes);
    if (this.firstLine) {
      this.firstLine = false;
      if (line.charCodeAt(0) === 0xfeff) line = line.slice(1);
    }
    this.processLine(line, out);
  }

  private processLine(line: string, out: SseEvent[]): void {
    if (line.length === 0) {
      if (this.data.length > 0) {
        const ev: SseEvent = { data: this.data.length === 1 ? this.data[0]! : this.data.join("\n") };
        if (this.eventName !== undefined) ev.event = this.eventName;
        if (this.eventId !== undefined) ev.id = this.eventId;
        out.push(ev);
      }
      this.data = [];
      this.eventName = undefined;
      this.eventId = undefined;
      return;
    }
    if (line.charCodeAt(0) === 0x3a /* ':' */) return;
    const colon = line.indexOf(":");
    let field: string;
    let value: string;
    if (colon === -1) {
      field = line;
      value = "";
    } else {
      field = line.slice(0, colon);
      value = line.charCodeAt(colon + 1) === 0x20 ? line.slice(colon + 2) : line.slice(colon + 1);
    }
    switch (field) {
      case "data":
        this.data.push(value);
        break;
      case "event":
        this.eventName = value;
        break;
      case "id":
        if (!value.includes("\0")) this.eventId = value;
        break;
      default:
        // `retry` and unknown fields are ignored.
        break;
    }
  }
}

/**
 * Decodes a byte stream into SSE events. The final unterminated event is dispatched only if
 * the stream ends cleanly; a read error propagates unchanged. Breaking out of the loop cancels
 * the underlying stream (the cancel promise's rejection is swallowed).
 */
export async function* decodeSse(
  body: ReadableStream<Uint8Array> | AsyncIterable<Uint8Array>,
): AsyncGenerator<SseEvent, void, undefined> {
  const decoder = new SseDecoder();
  if (body instanceof ReadableStream) {
    const reader = body.getReader();
    let finished = false;
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        for (const ev of decoder.push(value)) yield ev;
      }
      finished = true;
    } finally {
      if (!finished) reader.cancel().catch(() => {});
      reader.releaseLock();
    }
  } else {
    for await (const chunk of body) {
      for (const ev of decoder.push(chunk)) yield ev;
    }
  }
  for (const ev of decoder.end()) yield ev;
}

/**
 * Encodes one event as SSE text: optional `event:` and `id:` lines, one `data:` line per line
 * of `data` (LF, CRLF or CR in `data` all start a new `data:` line), and the blank line.
 */
export function encodeSse(ev: SseEvent): string {
  let s = "";
  if (ev.event !== undefined) s += `event: ${ev.event}\n`;
  if (ev.id !== undefined) s += `id: ${ev.id}\n`;
  for (const line of ev.data.split(/\r\n|\r|\n/)) s += `data: ${line}\n`;
  return s + "\n";
}

const encoder = new TextEncoder();

/** {@link encodeSse} as UTF-8 bytes. */
export function encodeSseBytes(ev: SseEvent): Uint8Array {
  return encoder.encode(encodeSse(ev));
}

/** An SSE comment line (`: text`), e.g. a keep-alive; clients ignore it. */
export function encodeSseComment(text = ""): string {
  return `: ${text.replace(/[\r\n]+/g, " ")}\n\n`;
}
