/**
 * An OpenAI-like embeddings upstream with dense vectors, for the amplification test: the
 * simulator's trigram vectors of one-character texts are almost all zeros (2 bytes a value
 * as text), a real model's are not (about 13: `-0.012345679,`). Input i gets vector i % 64,
 * printed with nine decimals as floats or as base64 float32 as asked, the answer streamed
 * vector by vector (this process keeps 64 vectors, not the answers), `usage` last, one token
 * per input. Runs in the test process; the gateway under test is another process.
 */
const DISTINCT = 64;
const enc = new TextEncoder();

/** Vector k's values: deterministic, dense, in (-0.1, 0.1), as the nine-decimal numbers the float answer prints. */
export function denseValues(k: number, dims: number): number[] {
  let x = (k + 1) * 2654435761;
  const out: number[] = [];
  for (let j = 0; j < dims; j++) {
    x = (Math.imul(x ^ (x >>> 15), 0x2c1b3c6d) + 0x6b43a9b5) >>> 0;
    out.push(Number(((x / 2 ** 32 - 0.5) / 5).toFixed(9)));
  }
  return out;
}

export class DenseUpstream {
  private server: ReturnType<typeof Bun.serve> | null = null;
  private floatText = new Map<number, Uint8Array[]>();
  calls = 0;
  /** The `encoding_format` of each request, in order. */
  readonly asked: string[] = [];

  get url(): string {
    return `http://127.0.0.1:${this.server!.port}`;
  }

  private vectors(dims: number): Uint8Array[] {
    let v = this.floatText.get(dims);
    if (!v) {
      v = [];
      for (let k = 0; k < DISTINCT; k++) v.push(enc.encode(JSON.stringify(denseValues(k, dims))));
      for (let k = 0; k < DISTINCT; k++) {
        const f = Float32Array.from(denseValues(k, dims));
        v.push(enc.encode(JSON.stringify(Buffer.from(f.buffer).toString("base64"))));
      }
      this.floatText.set(dims, v);
    }
    return v;
  }

  start(): this {
    this.server = Bun.serve({
      port: 0,
      hostname: "127.0.0.1",
      fetch: async (req) => {
        const body = (await req.json()) as {
          input: unknown[];
          dimensions?: number;
          encoding_format?: string;
          model: string;
        };
        this.calls++;
        this.asked.push(body.encoding_format ?? "float");
        const dims = body.dimensions ?? 3072;
        const n = Array.isArray(body.input) ? body.input.length : 1;
        const vecs = this.vectors(dims);
        const b64 = body.encoding_format === "base64";
        let i = -1;
        const stream = new ReadableStream<Uint8Array>({
          pull(ctl) {
            if (i === -1) ctl.enqueue(enc.encode('{\n  "object": "list",\n  "data": ['));
            else if (i < n) {
              ctl.enqueue(enc.encode(`${i ? "," : ""}\n    {"object": "embedding", "index": ${i}, "embedding": `));
              ctl.enqueue(vecs[(i % DISTINCT) + (b64 ? DISTINCT : 0)]!);
              ctl.enqueue(enc.encode("}"));
            } else {
              ctl.enqueue(
                enc.encode(
                  `\n  ],\n  "model": "${body.model}",\n  "usage": {"prompt_tokens": ${n}, "total_tokens": ${n}}\n}\n`,
                ),
              );
              ctl.close();
            }
            i++;
          },
        });
        return new Response(stream, { headers: { "content-type": "application/json" } });
      },
    });
    return this;
  }

  stop(): void {
    this.server?.stop(true);
  }
}
