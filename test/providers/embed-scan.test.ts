/**
 * The incremental reader of embeddings answers (src/providers/common/embed-scan.ts) and the
 * spool it writes to (src/lib/spool.ts): any chunking gives the same vectors, whitespace is
 * dropped, indexes and usage are read wherever they sit, Gemini's floats become base64, and
 * what is malformed, truncated, oversized or in another encoding than asked is a bad answer.
 */
import { describe, expect, test } from "bun:test";
import { EmbedScanner, type ScanPlan } from "../../src/providers/common/embed-scan";
import { Spool } from "../../src/lib/spool";
import { UpstreamError } from "../../src/core/upstream/error";

const OPENAI: ScanPlan = {
  vector: (p) => p.length === 3 && p[0] === "data" && p[2] === "embedding",
  keep: (p) => (p.length === 3 && p[0] === "data" && p[2] === "index") || (p.length === 1 && p[0] === "usage"),
};
const enc = new TextEncoder();
const dec = new TextDecoder();

/** Scans `text` in chunks of `size` bytes; returns the vectors as spooled text, the kept values and the spool. */
function scan(
  text: string,
  size: number,
  encoding: "float" | "base64" = "float",
  wire = encoding,
  memory = 1 << 20,
  maxVector = 4096,
) {
  const spool = new Spool(1 << 24, () => new Error("full"), memory);
  const sink = { encoding, write: (b: Uint8Array) => spool.write(b), end: () => spool.end() };
  const s = new EmbedScanner(OPENAI, sink, maxVector, wire);
  const bytes = enc.encode(text);
  for (let i = 0; i < bytes.length; i += size) s.push(bytes.slice(i, i + size));
  s.finish();
  const vectors = Array.from({ length: spool.count }, (_, k) => dec.decode(spool.read(k, 0, 1 << 20)));
  return { vectors, kept: Object.fromEntries(s.kept), paths: s.vectors.map((v) => v.path), spool };
}

const ANSWER = `{
  "object": "list",
  "data": [
    { "embedding": [ 0.5, -1.25e-3,
        2 ], "object": "embedding", "index": 1 },
    { "object": "embedding", "index": 0, "embedding": [1.5,0] }
  ],
  "model": "text-embedding-3-small", "note": "a \\"quoted\\" ] } string",
  "usage": { "prompt_tokens": 7, "total_tokens": 7 }
}`;

describe("embeddings answer scanner", () => {
  test("any chunking, one byte at a time included, gives the same vectors, indexes and usage", () => {
    for (const size of [1, 2, 3, 7, 64, 100_000]) {
      const r = scan(ANSWER, size);
      expect(r.vectors).toEqual(["[0.5,-1.25e-3,2]", "[1.5,0]"]);
      expect(r.kept).toEqual({ "data/0/index": 1, "data/1/index": 0, usage: { prompt_tokens: 7, total_tokens: 7 } });
      expect(r.paths).toEqual([
        ["data", 0, "embedding"],
        ["data", 1, "embedding"],
      ]);
    }
  });

  test("the spool moves to a file past its memory and reads back the same bytes", () => {
    const values = Array.from({ length: 3000 }, (_, i) => (i / 7).toFixed(6));
    const text = `{"data":[{"index":0,"embedding":[${values.join(",")}]}],"usage":{"prompt_tokens":1}}`;
    const r = scan(text, 500, "float", "float", 1024, 1 << 20);
    expect(r.vectors).toEqual([`[${values.join(",")}]`]);
    r.spool.reset();
    expect(r.spool.count).toBe(0);
    r.spool.close();
  });

  test("floats become base64 float32 for a base64 client (Gemini); base64 passes through", () => {
    const r = scan(`{"data":[{"index":0,"embedding":[0.5, -2]}]}`, 3, "base64", "float");
    const f = new Float32Array([0.5, -2]);
    expect(r.vectors).toEqual([`"${Buffer.from(f.buffer).toString("base64")}"`]);
    expect(scan(`{"data":[{"index":0,"embedding":"AAAAPwAAAMA="}]}`, 4, "base64").vectors).toEqual(['"AAAAPwAAAMA="']);
  });

  const bad = (text: string, encoding: "float" | "base64" = "float") => {
    try {
      scan(text, 5, encoding);
    } catch (e) {
      return e instanceof UpstreamError ? e.reason : String(e);
    }
    return "accepted";
  };

  test("malformed, truncated, oversized or other-encoding answers are bad answers", () => {
    expect(bad(`{"data":[{"index":0,"embedding":[1,2]}]`)).toBe("bad_answer"); // truncated
    expect(bad(`{"data":[{"index":0,"embedding":[1,"x"]}]}`)).toBe("bad_answer");
    expect(bad(`{"data":[{"index":0,"embedding":"AAAA"}]}`)).toBe("bad_answer"); // base64 where floats were asked
    expect(bad(`{"data":[{"index":0,"embedding":[1]}]}`, "base64")).toBe("bad_answer");
    expect(bad(`{"data":[{"index":0,"embedding":"AA\\u0041"}]}`, "base64")).toBe("bad_answer");
    expect(bad(`{"data":[{"index":0,"embedding":[${"1,".repeat(3000)}1]}]}`)).toBe("bad_answer"); // > 4096 bytes
    expect(bad(`{"data":[{"index":0,"embedding":[1]}]} extra`)).toBe("bad_answer");
    expect(bad(`{"data":[{"index":0,"embedding":[1]}]}`)).toBe("accepted");
  });
});
