import { describe, expect, test } from "bun:test";
import { decodeSse, encodeSse, encodeSseBytes, encodeSseComment, SseDecoder, type SseEvent } from "../../src/lib/sse";

const enc = new TextEncoder();

function decodeAll(chunks: Uint8Array[]): SseEvent[] {
  const d = new SseDecoder();
  const out: SseEvent[] = [];
  for (const c of chunks) out.push(...d.push(c));
  out.push(...d.end());
  return out;
}

function decodeText(text: string): SseEvent[] {
  return decodeAll([enc.encode(text)]);
}

/** A small deterministic PRNG so a failing seed can be replayed. */
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe("SseDecoder framing", () => {
  test("data-only events (OpenAI chat style) and [DONE]", () => {
    expect(decodeText('data: {"a":1}\n\ndata: [DONE]\n\n')).toEqual([{ data: '{"a":1}' }, { data: "[DONE]" }]);
  });

  test("event + data framing (Anthropic style)", () => {
    expect(decodeText('event: ping\ndata: {}\n\nevent: message_stop\ndata: {"type":"message_stop"}\n\n')).toEqual([
      { event: "ping", data: "{}" },
      { event: "message_stop", data: '{"type":"message_stop"}' },
    ]);
  });

  test("CRLF framing (Gemini style) and lone CR", () => {
    expect(decodeText("data: a\r\n\r\ndata: b\r\rdata: c\n\n")).toEqual([{ data: "a" }, { data: "b" }, { data: "c" }]);
  });

  test("multi-line data is joined with LF; one leading space is stripped, more are kept", () => {
    expect(decodeText("data: one\ndata:two\ndata:  three\n\n")).toEqual([{ data: "one\ntwo\n three" }]);
  });

  test("comments, unknown fields, retry and blocks without data are ignored", () => {
    expect(decodeText(": keepalive\n\nretry: 3000\n\nfoo: bar\ndata: x\n\nevent: lonely\n\n")).toEqual([{ data: "x" }]);
  });

  test("a field name without a colon has an empty value", () => {
    expect(decodeText("data\n\n")).toEqual([{ data: "" }]);
  });

  test("id is reported on the event that set it", () => {
    expect(decodeText("id: 7\ndata: x\n\ndata: y\n\n")).toEqual([{ id: "7", data: "x" }, { data: "y" }]);
  });

  test("a leading BOM is dropped", () => {
    // The BOM (EF BB BF) split across chunks.
    expect(decodeAll([new Uint8Array([0xef, 0xbb]), new Uint8Array([0xbf]), enc.encode("data: x\n\n")])).toEqual([
      { data: "x" },
    ]);
  });

  test("final event without a trailing blank line is dispatched at a clean end", () => {
    expect(decodeText("data: a\n\ndata: [DONE]")).toEqual([{ data: "a" }, { data: "[DONE]" }]);
    expect(decodeText("data: a\n\ndata: b\n")).toEqual([{ data: "a" }, { data: "b" }]);
  });

  test("without end(), an unterminated event is not dispatched", () => {
    const d = new SseDecoder();
    expect(d.push(enc.encode("data: a\n\ndata: partial"))).toEqual([{ data: "a" }]);
  });

  test("CRLF split across chunks does not produce an extra blank line", () => {
    expect(
      decodeAll([enc.encode("data: a\r"), enc.encode("\ndata: b\r"), enc.encode("\n\r"), enc.encode("\n")]),
    ).toEqual([{ data: "a\nb" }]);
  });

  test("multi-byte UTF-8 split inside a character", () => {
    const bytes = enc.encode("data: 안녕 🙂\n\n");
    const out = decodeAll([bytes.subarray(0, 8), bytes.subarray(8, 9), bytes.subarray(9, 15), bytes.subarray(15)]);
    expect(out).toEqual([{ data: "안녕 🙂" }]);
  });
});

describe("decodeSse over a ReadableStream", () => {
  test("yields events and the final unterminated one on clean end", async () => {
    const body = new ReadableStream<Uint8Array>({
      start(c) {
        c.enqueue(enc.encode("data: 1\n"));
        c.enqueue(enc.encode("\ndata: 2"));
        c.close();
      },
    });
    const got: SseEvent[] = [];
    for await (const ev of decodeSse(body)) got.push(ev);
    expect(got).toEqual([{ data: "1" }, { data: "2" }]);
  });

  test("a read error propagates and the partial event is not dispatched", async () => {
    let n = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(c) {
        if (n++ === 0) c.enqueue(enc.encode("data: 1\n\ndata: 2"));
        else c.error(new Error("reset"));
      },
    });
    const got: SseEvent[] = [];
    await expect(
      (async () => {
        for await (const ev of decodeSse(body)) got.push(ev);
      })(),
    ).rejects.toThrow("reset");
    expect(got).toEqual([{ data: "1" }]);
  });

  test("breaking out early cancels the source", async () => {
    let cancelled = false;
    const body = new ReadableStream<Uint8Array>({
      pull(c) {
        c.enqueue(enc.encode("data: x\n\n"));
      },
      cancel() {
        cancelled = true;
      },
    });
    for await (const _ of decodeSse(body)) break;
    expect(cancelled).toBe(true);
  });
});

describe("encoder", () => {
  test("encodeSse writes event, id and one data line per line", () => {
    expect(encodeSse({ event: "e", id: "1", data: "a\nb" })).toBe("event: e\nid: 1\ndata: a\ndata: b\n\n");
    expect(encodeSse({ data: "[DONE]" })).toBe("data: [DONE]\n\n");
    expect(new TextDecoder().decode(encodeSseBytes({ data: "x" }))).toBe("data: x\n\n");
    expect(encodeSseComment("keepalive")).toBe(": keepalive\n\n");
  });
});

describe("fuzz: random events, random framing, random chunk splits", () => {
  const alphabet = ["a", "b", "z", " ", ":", "{", "}", '"', "é", "한", "글", "🙂", "𝄞", "data", "event", "\n"];

  function randomString(r: () => number, max: number, allowNewline: boolean): string {
    const len = Math.floor(r() * max);
    let s = "";
    for (let i = 0; i < len; i++) {
      const c = alphabet[Math.floor(r() * alphabet.length)]!;
      if (c === "\n" && !allowNewline) continue;
      s += c;
    }
    return s;
  }

  /**
   * Serializes with a random line terminator per event block (mixing CR and LF inside one
   * block would be ambiguous: CR then an LF-terminated blank line reads as one CRLF) and
   * random comment lines.
   */
  function serialize(events: SseEvent[], r: () => number): string {
    const eols = ["\n", "\r\n", "\r"];
    let s = r() < 0.2 ? "\ufeff" : "";
    for (const ev of events) {
      const chosen = eols[Math.floor(r() * 3)]!;
      const eol = () => chosen;
      if (r() < 0.2) s += `: comment ${randomString(r, 5, false)}${eol()}`;
      if (ev.event !== undefined) s += `event: ${ev.event}${eol()}`;
      if (ev.id !== undefined) s += `id:${ev.id}${eol()}`;
      for (const line of ev.data.split("\n"))
        s += (r() < 0.5 ? `data: ${line}` : `data:${line.startsWith(" ") ? " " + line : line}`) + eol();
      s += eol();
      if (r() < 0.1) s += eol(); // extra blank lines are harmless
    }
    return s;
  }

  for (let seed = 1; seed <= 300; seed++) {
    test(`seed ${seed}`, () => {
      const r = rng(seed);
      const count = 1 + Math.floor(r() * 8);
      const events: SseEvent[] = [];
      for (let i = 0; i < count; i++) {
        const ev: SseEvent = { data: randomString(r, 40, true) };
        if (r() < 0.5) ev.event = randomString(r, 10, false).replace(/^[ ]+/, "") || "message";
        if (r() < 0.3) ev.id = String(Math.floor(r() * 1000));
        events.push(ev);
      }
      const bytes = enc.encode(serialize(events, r));
      // Random split points, biased to sometimes cut every byte.
      const chunks: Uint8Array[] = [];
      const everyByte = r() < 0.1;
      let pos = 0;
      while (pos < bytes.length) {
        const size = everyByte ? 1 : 1 + Math.floor(r() * 12);
        chunks.push(bytes.subarray(pos, pos + size));
        pos += size;
      }
      expect(decodeAll(chunks)).toEqual(events);
    });
  }
});
