/**
 * The books of Messages calls on PostgreSQL and PGlite: every answered call (JSON, translated
 * stream, relayed Anthropic stream) is charged exactly once, at the cost it reports, with its
 * usage event naming the API; a stream cut mid-way is charged once for what was received; a
 * refused call (402, 422) moves nothing. Checked in SQL against the ledger.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { dbKinds, startTestGateway, type TestGateway } from "../harness";
import { microToKrwRounded } from "../../src/lib/money";
import { books, parseSse, postMessages, requestIdOf, tenant } from "./helpers";

setDefaultTimeout(30_000);

for (const kind of await dbKinds()) {
  describe(`books on ${kind}`, () => {
    let g: TestGateway;
    beforeAll(async () => {
      g = await startTestGateway({ db: kind });
    }, 60_000);
    afterAll(async () => {
      await g?.stop();
    });

    test("JSON, translated and relayed streams, a cut stream: one charge each, as reported", async () => {
      const { user, key } = await tenant(g, 1000);
      const ask = (model: string, content: string, stream = false) =>
        postMessages(g, key.key, { model, max_tokens: 200, stream, messages: [{ role: "user", content }] });
      const reported = new Map<string, number>();
      for (const model of ["claude-haiku-4-5", "gpt-4o-mini", "gemini-2.5-flash"]) {
        const json = await ask(model, "count me [sim:tokens=150]");
        const body: any = await json.json();
        reported.set(json.headers.get("x-request-id")!, Number(json.headers.get("x-cost-krw")));
        expect(body.usage.output_tokens).toBe(150);
        const stream = await ask(model, "stream me [sim:tokens=150]", true);
        const frames = parseSse(await stream.text());
        reported.set(requestIdOf(frames[0]!.json.message.id ?? ""), frames.at(-2)!.json.usage.cost_krw);
      }
      const cut = await ask("claude-haiku-4-5", "cut [sim:tokens=150] [sim:drop=2]", true);
      expect(parseSse(await cut.text()).at(-1)!.event).toBe("error");
      const b = await books(g, user.id);
      expect(b.events).toHaveLength(7);
      expect(b.charges).toHaveLength(7);
      expect(new Set(b.charges.map((c: any) => c.request_id)).size).toBe(7);
      expect(b.events.every((e: any) => e.api === "messages")).toBe(true);
      expect(b.holds.every((h: any) => h.status === "settled")).toBe(true);
      const byId = new Map(b.events.map((e: any) => [e.request_id, e]));
      for (const c of b.charges)
        expect(-BigInt(c.amount_micro)).toBe(BigInt((byId.get(c.request_id) as any).cost_micro));
      // The relayed Claude stream's message id is the upstream's: its cost is checked by amount instead.
      const known = [...reported].filter(([id]) => byId.has(id));
      expect(known.length).toBeGreaterThanOrEqual(5);
      for (const [id, krw] of known) expect(microToKrwRounded(BigInt((byId.get(id) as any).cost_micro))).toBe(krw);
      const total = b.charges.reduce((s: bigint, c: any) => s - BigInt(c.amount_micro), 0n);
      expect(b.balance).toBe(1000n * 1_000_000n - total);
      expect(b.held).toBe(0n);
      expect(b.events.filter((e: any) => e.status === 502)).toHaveLength(1);
    });

    test("refused calls move nothing: no credit (402), a bad body (422)", async () => {
      const { user, key } = await tenant(g, 0);
      expect(
        (
          await postMessages(g, key.key, {
            model: "gpt-4o-mini",
            max_tokens: 10,
            messages: [{ role: "user", content: "hi" }],
          })
        ).status,
      ).toBe(402);
      expect(
        (
          await postMessages(g, key.key, {
            model: "claude-haiku-4-5",
            max_tokens: 10,
            stream: true,
            messages: [{ role: "user", content: "hi" }],
          })
        ).status,
      ).toBe(402);
      expect(
        (await postMessages(g, key.key, { model: "gpt-4o-mini", messages: [{ role: "user", content: "hi" }] })).status,
      ).toBe(422);
      const b = await books(g, user.id);
      expect(b.charges).toEqual([]);
      expect(b.balance).toBe(0n);
      expect(b.held).toBe(0n);
      expect(b.holds.filter((h: any) => h.status !== "released")).toEqual([]);
    });
  });
}
