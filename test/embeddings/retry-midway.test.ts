/**
 * An answer that ends midway (issue 28, #2: the vectors are spooled as they arrive): the
 * next attempt starts the spool over, so the client gets exactly the second answer, once, in
 * input order even when the upstream sent it out of order, charged once. An upstream sending
 * more than the asked vectors can take is a bad answer. PostgreSQL and PGlite; the upstream is
 * a real HTTP server.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { dbKinds, startTestGateway, type TestGateway } from "../harness";
import { money, tenant } from "../support/chat";
import { embed } from "./helpers";

const enc = new TextEncoder();
let attempts = 0;
let mode: "break-then-ok" | "oversized" = "break-then-ok";
const vec = (i: number) => Array.from({ length: 600 }, (_, j) => Number(((i + 1) * 0.001 + j * 1e-6).toFixed(6)));
const entry = (i: number) => `{"object":"embedding","index":${i},"embedding":${JSON.stringify(vec(i))}}`;

const upstream = Bun.serve({
  port: 0,
  hostname: "127.0.0.1",
  async fetch(req) {
    await req.json();
    attempts++;
    if (mode === "oversized") {
      const huge = Array.from({ length: 5000 }, () => "0.123456789").join(",");
      return new Response(`{"data":[{"index":0,"embedding":[${huge}]}],"usage":{"prompt_tokens":1}}`);
    }
    if (attempts === 1) {
      // Three whole vectors, spooled, then the body ends without the rest of the answer.
      const stream = new ReadableStream<Uint8Array>({
        async pull(c) {
          c.enqueue(enc.encode(`{"object":"list","data":[${entry(0)},${entry(1)},${entry(2)}`));
          await Bun.sleep(20);
          c.close();
        },
      });
      return new Response(stream, { headers: { "content-type": "application/json" } });
    }
    // Out of order: the gateway answers in input order.
    return new Response(
      `{"object":"list","data":[${entry(2)},${entry(0)},${entry(1)}],"model":"x","usage":{"prompt_tokens":3,"total_tokens":3}}`,
    );
  },
});

for (const kind of await dbKinds()) {
  describe(`embeddings answers that break off, on ${kind}`, () => {
    let g: TestGateway;
    beforeAll(async () => {
      g = await startTestGateway({
        db: kind,
        env: { OPENAI_BASE_URL: `http://127.0.0.1:${upstream.port}`, OPENAI_API_KEY: "test" },
      });
    }, 60_000);
    afterAll(async () => {
      await g?.stop();
    });

    test("a broken answer is retried from scratch: one whole answer in input order, charged once", async () => {
      const { key, user } = await tenant(g, 10);
      attempts = 0;
      mode = "break-then-ok";
      const r = await embed(g, key.key, {
        model: "text-embedding-3-small",
        input: ["a", "b", "c"],
        encoding_format: "float",
        dimensions: 600,
      });
      expect(attempts).toBe(2);
      expect(r.status).toBe(200);
      expect(r.body.data.map((d: { index: number }) => d.index)).toEqual([0, 1, 2]);
      expect(r.body.data.map((d: { embedding: number[] }) => d.embedding)).toEqual([vec(0), vec(1), vec(2)]);
      expect(r.body.usage).toEqual({ prompt_tokens: 3, total_tokens: 3 });
      await g.gw.settlements.quiesce(user.id);
      const [row] = await g.gw.deps.db.query<{ n: number }>(
        "select count(*)::int as n from ledger_entries where user_id = $1 and kind = 'charge'",
        [user.id],
      );
      expect(row!.n).toBe(1);
      expect(await money(g, user.id)).toEqual({ balance: 10_000_000n - 100_000n, held: 0n });
    });

    test("an answer larger than the asked vectors can take: a bad answer, 502, nothing charged", async () => {
      const { key, user } = await tenant(g, 10);
      attempts = 0;
      mode = "oversized";
      const r = await embed(g, key.key, { model: "text-embedding-3-small", input: "a", dimensions: 8 });
      expect(r.status).toBe(502);
      expect(r.body.detail.error).toBe("upstream_unavailable");
      expect(attempts).toBe(3);
      expect(await money(g, user.id)).toEqual({ balance: 10_000_000n, held: 0n });
    });
  });
}

afterAll(() => upstream.stop(true));
