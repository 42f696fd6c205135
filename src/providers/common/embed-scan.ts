/**
 * An incremental reader of an embeddings answer (OpenAI's `{data: [{index, embedding}], usage}`,
 * Gemini's `{embeddings: [{values}]}`): bytes in as they arrive, vectors out to an
 * EmbeddingSink in the client's encoding, small values (usage, index) kept, everything else
 * skipped. Memory is one vector at most (when the encoding must change), never the answer:
 * a vector passes through by native `indexOf` to its closing `]` or `"`, its characters checked
 * (floats: digits, sign, point, exponent, commas; base64: its alphabet) and whitespace dropped.
 * A float vector becomes base64 one vector at a time where the upstream has no base64
 * (Gemini). A vector in another form than the one the upstream was asked for, or anything
 * malformed, is a bad answer (retried like a 5xx, decision 40). Issue 28, #2.
 */
import type { EmbeddingEncoding, EmbeddingSink } from "../../core/model/provider";
export { maxVectorBytes } from "../../core/model/provider";
import { badAnswer } from "./errors";

export type JsonPath = readonly (string | number)[];

export interface ScanPlan {
  /** Whether the value at `path` is a vector (an array of numbers, or a base64 string). */
  vector(path: JsonPath): boolean;
  /** Whether the (small) value at `path` is kept, parsed. */
  keep(path: JsonPath): boolean;
}

const Mode = { Normal: 0, String: 1, Literal: 2, Floats: 3, Base64: 4 } as const;
type Expect = "value" | "valueOrEnd" | "key" | "keyOrEnd" | "colon" | "commaOrEnd" | "done";

const FLOAT_CHARS = new Uint8Array(256);
for (const c of "0123456789-+.eE,") FLOAT_CHARS[c.charCodeAt(0)] = 1;
for (const c of " \t\r\n") FLOAT_CHARS[c.charCodeAt(0)] = 2; // dropped
const B64_CHARS = new Uint8Array(256);
for (const c of "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=") B64_CHARS[c.charCodeAt(0)] = 1;
const WS = new Uint8Array(256);
for (const c of " \t\r\n") WS[c.charCodeAt(0)] = 1;

const enc = new TextEncoder();
const dec = new TextDecoder();
const OPEN = enc.encode("[");
const CLOSE = enc.encode("]");
const QUOTE = enc.encode('"');
const MAX_KEPT = 64 << 10;

function floatsToBase64(text: string): string {
  const f = Float32Array.from(JSON.parse(`[${text}]`) as number[]);
  return Buffer.from(f.buffer, f.byteOffset, f.byteLength).toString("base64");
}

export class EmbedScanner {
  /** Values kept (plan.keep), by their path joined with "/". */
  readonly kept = new Map<string, unknown>();
  /** Each vector's path (its array positions) and arrival number, in arrival order. */
  readonly vectors: { path: (string | number)[]; arrival: number }[] = [];

  private path: (string | number)[] = [];
  private isArray: boolean[] = [];
  private expect: Expect = "value";
  private mode: number = Mode.Normal;
  private escaped = false;
  private isKey = false;
  private keyBytes: number[] = [];
  private keepDepth = -1;
  private keepBytes: number[] = [];
  /** The numbers of the vector being read when it must become base64; bytes of the vector so far. */
  private acc = "";
  private vecBytes = 0;

  constructor(
    private readonly plan: ScanPlan,
    private readonly sink: EmbeddingSink,
    private readonly maxVectorBytes: number,
    /** The form the upstream was asked for: floats become base64 when the sink wants it, never the reverse. */
    private readonly wire: EmbeddingEncoding,
  ) {
    if (wire === "base64" && sink.encoding !== "base64") throw new Error("base64 from upstream is for base64 clients");
  }

  push(chunk: Uint8Array): void {
    let i = 0;
    const n = chunk.length;
    while (i < n) {
      switch (this.mode) {
        case Mode.Floats:
          i = this.floats(chunk, i);
          break;
        case Mode.Base64:
          i = this.base64(chunk, i);
          break;
        case Mode.String:
          i = this.string(chunk, i);
          break;
        case Mode.Literal: {
          const b = chunk[i]!;
          if (b === 0x2c || b === 0x7d || b === 0x5d || WS[b]) this.valueEnded();
          else {
            if (this.keepDepth >= 0) this.keepByte(b);
            i++;
          }
          break;
        }
        default:
          this.normal(chunk[i]!);
          i++;
      }
    }
  }

  /** The answer must have ended with its one root value. */
  finish(): void {
    if (this.mode === Mode.Literal) this.valueEnded();
    if (this.expect !== "done") throw badAnswer("the embeddings answer ended early", 200, undefined);
  }

  private fail(what: string): never {
    throw badAnswer(`the embeddings answer is not valid JSON (${what})`, 200, undefined);
  }

  private normal(b: number): void {
    if (WS[b]) return;
    if (this.keepDepth >= 0) this.keepByte(b);
    switch (this.expect) {
      case "done":
        this.fail("data after the end");
      case "colon":
        if (b !== 0x3a) this.fail("expected ':'");
        this.expect = "value";
        return;
      case "key":
      case "keyOrEnd":
        if (b === 0x22) {
          this.mode = Mode.String;
          this.isKey = true;
          this.keyBytes = [];
          return;
        }
        if (b === 0x7d && this.expect === "keyOrEnd") return this.close(false);
        this.fail("expected a key");
      case "commaOrEnd": {
        const top = this.isArray.length - 1;
        if (b === 0x2c) {
          if (this.isArray[top]) {
            (this.path[top] as number)++;
            this.expect = "value";
          } else this.expect = "key";
          return;
        }
        if (b === 0x5d && this.isArray[top]) return this.close(true);
        if (b === 0x7d && !this.isArray[top]) return this.close(false);
        this.fail("expected ',' or the end of a container");
      }
      default:
        if (b === 0x5d && this.expect === "valueOrEnd") return this.close(true);
        this.valueStart(b);
    }
  }

  private valueStart(b: number): void {
    if (this.plan.vector(this.path)) {
      if (this.keepDepth >= 0) this.keepBytes.pop();
      this.acc = "";
      this.vecBytes = 0;
      if (b === 0x5b && this.wire === "float") this.mode = Mode.Floats;
      else if (b === 0x22 && this.wire === "base64") this.mode = Mode.Base64;
      else this.fail(`a vector that is not ${this.wire === "float" ? "a list of numbers" : "a base64 string"}`);
      this.sink.write(this.sink.encoding === "float" ? OPEN : QUOTE);
      return;
    }
    if (this.keepDepth < 0 && this.plan.keep(this.path)) {
      this.keepDepth = this.path.length;
      this.keepBytes = [b];
    }
    if (b === 0x7b) {
      this.path.push("");
      this.isArray.push(false);
      this.expect = "keyOrEnd";
    } else if (b === 0x5b) {
      this.path.push(0);
      this.isArray.push(true);
      this.expect = "valueOrEnd";
    } else if (b === 0x22) {
      this.mode = Mode.String;
      this.isKey = false;
    } else this.mode = Mode.Literal;
  }

  private close(array: boolean): void {
    if (this.isArray.length === 0 || this.isArray[this.isArray.length - 1] !== array) this.fail("unbalanced");
    this.path.pop();
    this.isArray.pop();
    this.valueEnded();
  }

  private valueEnded(): void {
    this.mode = Mode.Normal;
    if (this.keepDepth === this.path.length) {
      const text = dec.decode(Uint8Array.from(this.keepBytes));
      try {
        this.kept.set(this.path.join("/"), JSON.parse(text));
      } catch {
        this.fail("a value that does not parse");
      }
      this.keepDepth = -1;
      this.keepBytes = [];
    }
    this.expect = this.path.length === 0 ? "done" : "commaOrEnd";
  }

  private keepByte(b: number): void {
    if (this.keepBytes.length >= MAX_KEPT) this.fail("a kept value too large");
    this.keepBytes.push(b);
  }

  private string(chunk: Uint8Array, i: number): number {
    const n = chunk.length;
    for (; i < n; i++) {
      const b = chunk[i]!;
      if (this.isKey) {
        if (this.keyBytes.length > 1024) this.fail("a key too long");
        this.keyBytes.push(b);
      }
      if (this.keepDepth >= 0) this.keepByte(b);
      if (this.escaped) this.escaped = false;
      else if (b === 0x5c) this.escaped = true;
      else if (b === 0x22) {
        if (this.isKey) {
          const key = JSON.parse(dec.decode(Uint8Array.from([0x22, ...this.keyBytes]))) as string;
          this.path[this.path.length - 1] = key;
          this.mode = Mode.Normal;
          this.expect = "colon";
        } else this.valueEnded();
        return i + 1;
      }
    }
    return i;
  }

  private grow(len: number): void {
    this.vecBytes += len;
    if (this.vecBytes > this.maxVectorBytes) this.fail("a vector larger than asked for");
  }

  private floats(chunk: Uint8Array, i: number): number {
    const close = chunk.indexOf(0x5d, i);
    const end = close < 0 ? chunk.length : close;
    this.grow(end - i);
    // Whitespace is dropped in place: the chunk is this reader's own, and no copy is made.
    let o = i;
    for (let j = i; j < end; j++) {
      const b = chunk[j]!;
      const t = FLOAT_CHARS[b];
      if (t === 1) chunk[o++] = b;
      else if (t !== 2) this.fail("a character that is not part of a number in a vector");
    }
    const part = chunk.subarray(i, o);
    o -= i;
    if (this.sink.encoding === "float") {
      if (o) this.sink.write(part);
    } else this.acc += dec.decode(part);
    if (close < 0) return chunk.length;
    if (this.sink.encoding === "float") this.sink.write(CLOSE);
    else {
      let b64: string;
      try {
        b64 = floatsToBase64(this.acc);
      } catch {
        this.fail("numbers that do not parse");
      }
      this.sink.write(enc.encode(b64));
      this.sink.write(QUOTE);
    }
    this.vectorEnded();
    return close + 1;
  }

  private base64(chunk: Uint8Array, i: number): number {
    const close = chunk.indexOf(0x22, i);
    const end = close < 0 ? chunk.length : close;
    this.grow(end - i);
    for (let j = i; j < end; j++) if (!B64_CHARS[chunk[j]!]) this.fail("a character outside base64 in a vector");
    if (end > i) this.sink.write(chunk.subarray(i, end));
    if (close < 0) return chunk.length;
    this.sink.write(QUOTE);
    this.vectorEnded();
    return close + 1;
  }

  private vectorEnded(): void {
    this.acc = "";
    this.vectors.push({ path: [...this.path], arrival: this.sink.end() });
    this.valueEnded();
  }
}

/** Reads a body stream through a scanner (the deadlines and aborts are the stream's own). */
export async function scanBody(body: ReadableStream<Uint8Array>, scanner: EmbedScanner): Promise<void> {
  const reader = body.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      scanner.push(value);
    }
  } catch (e) {
    await reader.cancel().catch(() => {});
    throw e;
  }
  scanner.finish();
}
