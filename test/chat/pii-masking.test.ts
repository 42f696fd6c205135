/**
 * PII masking round trip through /v1/chat/completions: with `pii_masking_enabled` (the
 * default) no e-mail, phone number, resident registration number or card number leaves for
 * a provider (seen at a recording proxy in front of the simulator), and the placeholders the
 * provider echoes back are restored before the client sees the answer, streamed or not.
 * The simulator echoes the start of the last user message, which makes the round trip visible.
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from "bun:test";
import type { TestGateway } from "../harness";
import { chatFetch, fastUser, parseSse, proxiedGateway, type RecordingProxy, sdk, user } from "../support/chat";

// Real servers and databases on a shared machine: generous per-test deadlines.
setDefaultTimeout(20_000);

let g: TestGateway;
let proxy: RecordingProxy;
beforeAll(async () => {
  ({ g, proxy } = await proxiedGateway(["openai", "anthropic", "google"]));
}, 60_000);
afterAll(async () => {
  await g?.stop();
  proxy?.stop();
});

const SECRETS = {
  email: "mail alice.kim@example.co.kr now",
  phone: "call 010-1234-5678 today",
  intlPhone: "call +82 10 9876 5432 today",
  card: "card 4111 1111 1111 1111 ok",
  rrn: "rrn 900101-1234568 ok",
};
const VALUES = [
  "alice.kim@example.co.kr",
  "010-1234-5678",
  "+82 10 9876 5432",
  "4111 1111 1111 1111",
  "900101-1234568",
];

const sentText = () => JSON.stringify(proxy.chatBodies());
const PLACEHOLDER = /\[(EMAIL|PHONE|RRN|CARD|PASSPORT)_\d+\]/;

describe("masking on (default)", () => {
  for (const [model, provider] of [
    ["gpt-4o-mini", "openai"],
    ["claude-haiku-4-5", "anthropic"],
    ["gemini-2.5-flash", "google"],
  ] as const) {
    test(`${model}: nothing personal reaches ${provider}; the answer is restored (JSON and stream)`, async () => {
      const u = await fastUser(g, { creditKrw: 100 });
      const k = await g.newKey(u);
      expect(k.pii_masking_enabled).toBe(true);
      const c = sdk(g, k.key);
      for (const [name, text] of Object.entries(SECRETS)) {
        const value = VALUES[Object.keys(SECRETS).indexOf(name)]!;
        proxy.clear();
        const r = await c.chat.completions.create({
          model,
          messages: [{ role: "system", content: `Reply to ${value}` }, ...user(text)],
        });
        const answer = r.choices[0]!.message.content!;
        expect([name, answer.includes(value)]).toEqual([name, true]);
        expect([name, PLACEHOLDER.test(answer)]).toEqual([name, false]);
        expect([name, sentText().includes(value)]).toEqual([name, false]);
        expect([name, PLACEHOLDER.test(sentText())]).toEqual([name, true]);

        proxy.clear();
        const res = await chatFetch(g, k.key, { model, stream: true, messages: user(text) });
        const events = parseSse(await res.text());
        const streamed = events.map((e) => e.json?.choices?.[0]?.delta?.content ?? "").join("");
        expect([name, streamed.includes(value)]).toEqual([name, true]);
        expect([name, PLACEHOLDER.test(streamed)]).toEqual([name, false]);
        expect([name, sentText().includes(value)]).toEqual([name, false]);
        expect(events.at(-1)!.data).toBe("[DONE]");
      }
    });
  }

  test("a placeholder split across stream chunks is restored whole", async () => {
    const { key } = await (async () => {
      const u = await fastUser(g, { creditKrw: 100 });
      return { key: await g.newKey(u) };
    })();
    // Several values in a row give long placeholders that the simulator's word-boundary
    // chunking can cut; every one must come back intact.
    const text = "a@b.co c@d.co e@f.co g@h.co i@j.co";
    for (const model of ["gpt-4o-mini", "claude-haiku-4-5"]) {
      const res = await chatFetch(g, key.key, { model, stream: true, messages: user(text) });
      const streamed = parseSse(await res.text())
        .map((e) => e.json?.choices?.[0]?.delta?.content ?? "")
        .join("");
      expect(streamed).toContain(text);
      expect(PLACEHOLDER.test(streamed)).toBe(false);
    }
  });

  test("the mid-stream failure's partial is restored too", async () => {
    const u = await fastUser(g, { creditKrw: 100 });
    const k = await g.newKey(u);
    const res = await chatFetch(g, k.key, {
      model: "deepseek-v3",
      stream: true,
      messages: user("x@y.io [sim:tokens=200] [sim:drop=3]"),
    });
    const events = parseSse(await res.text()).filter((e) => e.data !== null);
    const err = events.at(-2)!.json.error;
    expect(err.code).toBe("upstream_error");
    expect(PLACEHOLDER.test(err.partial)).toBe(false);
    expect(err.partial).toContain("x@y.io");
  });
});

describe("masking off", () => {
  test("a key with pii_masking_enabled: false sends the text as written", async () => {
    const u = await fastUser(g, { creditKrw: 100 });
    const k = await g.newKey(u, { pii_masking_enabled: false });
    proxy.clear();
    const r = await sdk(g, k.key).chat.completions.create({ model: "gpt-4o-mini", messages: user(SECRETS.email) });
    expect(r.choices[0]!.message.content).toContain("alice.kim@example.co.kr");
    expect(sentText()).toContain("alice.kim@example.co.kr");
  });

  test("a request without PII is sent unchanged", async () => {
    const u = await fastUser(g, { creditKrw: 100 });
    const k = await g.newKey(u);
    proxy.clear();
    await sdk(g, k.key).chat.completions.create({
      model: "gpt-4o-mini",
      messages: user("nothing personal here, order 12345"),
    });
    expect(proxy.chatBodies()[0].messages).toEqual([{ role: "user", content: "nothing personal here, order 12345" }]);
  });
});
