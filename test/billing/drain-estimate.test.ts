/**
 * Issue 28 #16: a stream whose usage does not come within STREAM_DRAIN_MS of the client leaving
 * is billed the best estimate of what was sent and delivered, not the hold's worst case. The
 * case that cost 98× the real price: inline images, which the hold counts at the largest size a
 * provider accepts (48,169 tokens each on GPT-4o mini). Real sockets, the simulator paced so
 * its usage would come long after the drain time, the books checked in SQL.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { deflateSync } from "node:zlib";
import { dbKinds, startTestGateway, type TestGateway } from "../harness";
import { money, tenant } from "../support/chat";
import { checkBooks } from "../support/books";
import { getOffering, getProvider } from "../../src/core/catalog/types";
import { usageCostMicro } from "../../src/core/billing/pricing";

setDefaultTimeout(30_000);

const DRAIN_MS = 600;
/** Frames 0.5 s apart for 300 tokens: the usage would come many seconds after the drain time. */
const DIRECTIVES = "[sim:tokens=300] [sim:chunk_ms=500]";

/** A valid grey PNG of `w`×`h` (the gateway reads only its header; the simulator not at all). */
function png(w: number, h: number): string {
  const crcTable = Array.from({ length: 256 }, (_, n) => {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    return c >>> 0;
  });
  const crc = (b: Buffer) => {
    let c = 0xffffffff;
    for (const x of b) c = crcTable[(c ^ x) & 0xff]! ^ (c >>> 8);
    return (c ^ 0xffffffff) >>> 0;
  };
  const chunk = (type: string, data: Buffer) => {
    const len = Buffer.alloc(4);
    len.writeUInt32BE(data.length);
    const body = Buffer.concat([Buffer.from(type, "ascii"), data]);
    const sum = Buffer.alloc(4);
    sum.writeUInt32BE(crc(body));
    return Buffer.concat([len, body, sum]);
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(w, 0);
  ihdr.writeUInt32BE(h, 4);
  ihdr[8] = 8; // bit depth; colour type 0 (grey)
  const rows = Buffer.alloc((w + 1) * h, 0x80);
  for (let y = 0; y < h; y++) rows[y * (w + 1)] = 0;
  const file = Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk("IHDR", ihdr),
    chunk("IDAT", deflateSync(rows)),
    chunk("IEND", Buffer.alloc(0)),
  ]);
  return `data:image/png;base64,${file.toString("base64")}`;
}

const QUESTION = `Describe these two pictures. ${DIRECTIVES}`;
const SMALL = png(1, 1);
const WIDE = png(600, 400);

/** The hold's text estimate of one user message (docs: ~3 ASCII characters a token, 4 per message, 8 per request). */
const textTokens = (s: string) => Math.ceil(s.length / 3) + 4 + 8;

async function hangUpMidContent(g: TestGateway, key: string, path: string, body: unknown, content: RegExp) {
  const ac = new AbortController();
  const res = await fetch(g.url + path, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json", "anthropic-version": "2023-06-01" },
    body: JSON.stringify(body),
    signal: ac.signal,
  });
  expect(res.status).toBe(200);
  const rid = res.headers.get("x-request-id")!;
  const reader = res.body!.getReader();
  const dec = new TextDecoder();
  let text = "";
  while (!content.test(text)) {
    const { done, value } = await reader.read();
    if (done) throw new Error(`the stream ended before any content: ${text}`);
    text += dec.decode(value, { stream: true });
  }
  ac.abort();
  await reader.cancel().catch(() => {});
  return rid;
}

/** The call's books, once its hold is closed: exactly one charge, equal to its usage event's cost. */
async function books(g: TestGateway, userId: string, rid: string) {
  const db = g.gw.deps.db;
  const deadline = performance.now() + DRAIN_MS + 10_000;
  for (;;) {
    const [h] = await db.query<{ status: string }>("select status from holds where id = $1", [rid]);
    if (h && h.status !== "open") break;
    if (performance.now() > deadline) throw new Error(`hold ${rid} still ${h?.status ?? "missing"}`);
    await Bun.sleep(50);
  }
  expect((await money(g, userId)).held).toBe(0n);
  const charges = await db.query<{ a: string }>(
    "select (-amount_micro)::text as a from ledger_entries where request_id = $1 and kind = 'charge'",
    [rid],
  );
  expect(charges).toHaveLength(1);
  const [h] = await db.query<{ status: string; charged: string; amount: string }>(
    "select status, charged_micro::text as charged, amount_micro::text as amount from holds where id = $1",
    [rid],
  );
  expect(h!.status).toBe("settled");
  expect(h!.charged).toBe(charges[0]!.a);
  const [e] = await db.query<Record<string, unknown>>(
    `select status, model, provider, prompt_tokens as p, completion_tokens as c, cost_micro::text as cost,
            fx_milli::text as fx from usage_events where request_id = $1`,
    [rid],
  );
  expect(String(e!.cost)).toBe(charges[0]!.a);
  expect((await checkBooks(db, [userId])).violations).toEqual([]);
  return {
    charge: BigInt(charges[0]!.a),
    hold: BigInt(h!.amount),
    status: Number(e!.status),
    prompt: Number(e!.p),
    completion: Number(e!.c),
    model: String(e!.model),
    provider: String(e!.provider),
    fx: BigInt(String(e!.fx)),
  };
}

/** The price of `usage` on the offering that answered, by the gateway's catalog: exact micro-won. */
function priced(g: TestGateway, b: Awaited<ReturnType<typeof books>>): bigint {
  const snap = g.gw.catalog.peek()!;
  const offering = getOffering(snap, b.model, b.provider)!;
  const provider = getProvider(snap, b.provider)!;
  return usageCostMicro(
    offering.pricing!,
    provider.caching,
    {
      promptTokens: b.prompt,
      completionTokens: b.completion,
      cachedTokens: 0,
      cacheWriteTokens: 0,
      reasoningTokens: 0,
    },
    b.fx,
  );
}

for (const kind of await dbKinds()) {
  describe(`a stream left without its usage is billed its best estimate (${kind})`, () => {
    let g: TestGateway;
    beforeAll(async () => {
      g = await startTestGateway({ db: kind, env: { STREAM_DRAIN_MS: String(DRAIN_MS) } });
    }, 60_000);
    afterAll(async () => {
      await g?.stop();
    });

    test("chat gpt-4o-mini with two inline images: each image at its own size, not the largest", async () => {
      const { user: u, key } = await tenant(g, 1000);
      const body = {
        model: "gpt-4o-mini",
        stream: true,
        messages: [
          {
            role: "user",
            content: [
              { type: "text", text: QUESTION },
              { type: "image_url", image_url: { url: SMALL } },
              { type: "image_url", image_url: { url: WIDE } },
            ],
          },
        ],
      };
      const rid = await hangUpMidContent(g, key.key, "/v1/chat/completions", body, /"content":"[^"]/);
      const b = await books(g, u.id, rid);
      expect(b.status).toBe(499);
      // OpenAI's rule for GPT-4o mini: 2,833 + 5,667 per 512-px tile; 1×1 is one tile, 600×400 two.
      expect(b.prompt).toBe(textTokens(QUESTION) + (2833 + 5667) + (2833 + 2 * 5667));
      // Some output was received before the drain ended, far from all 300 tokens.
      expect(b.completion).toBeGreaterThan(0);
      expect(b.completion).toBeLessThan(300);
      expect(b.charge).toBe(priced(g, b));
      // The hold counts both images at 48,169 tokens: the bill is far below it.
      expect(b.charge * 3n).toBeLessThan(b.hold);
    });

    test("Messages claude-haiku-4-5 with an inline image: width × height / 750", async () => {
      const { user: u, key } = await tenant(g, 1000);
      const body = {
        model: "claude-haiku-4-5",
        stream: true,
        max_tokens: 1024,
        messages: [
          {
            role: "user",
            content: [
              { type: "text", text: QUESTION },
              { type: "image", source: { type: "base64", media_type: "image/png", data: WIDE.split(",")[1] } },
            ],
          },
        ],
      };
      const rid = await hangUpMidContent(g, key.key, "/v1/messages", body, /text_delta/);
      const b = await books(g, u.id, rid);
      expect(b.status).toBe(499);
      // The image is 600 × 400 / 750 = 320 tokens, where the hold counts 1,600; the text and
      // Anthropic's framing are the hold's own estimate of them, so only the image is compared.
      const withoutImage = await (async () => {
        const other = await tenant(g, 1000);
        const rid2 = await hangUpMidContent(
          g,
          other.key.key,
          "/v1/messages",
          { ...body, messages: [{ role: "user", content: [{ type: "text", text: QUESTION }] }] },
          /text_delta/,
        );
        return books(g, other.user.id, rid2);
      })();
      expect(b.prompt - withoutImage.prompt).toBe(320);
      expect(b.completion).toBeGreaterThan(0);
      expect(b.charge).toBe(priced(g, b));
      expect(b.charge).toBeLessThan(b.hold);
    });
  });
}
