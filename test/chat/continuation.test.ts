/**
 * Stream continuation (`provider.continue_on_failure`) over real sockets. deepseek-v3 is offered
 * by deepseek (first) and together; `[sim:drop@deepseek=N]` breaks only deepseek's stream after
 * N content frames. Without the opt-in the break ends the stream as the specification says;
 * with it, together continues the answer (asked through a recording proxy, so its request can be
 * read) and the client sees one stream whose text is deepseek's part followed by together's.
 * Each part is billed at its own provider's price: deepseek's estimated from the text it sent,
 * together's from its usage, summed into one charge (ledger and usage_events in SQL).
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import Anthropic from "@anthropic-ai/sdk";
import { dbKinds, type TestGateway } from "../harness";
import {
  candidates,
  chatFetch,
  eventually,
  parseSse,
  proxiedGateway,
  sdk,
  simChatCalls,
  tenant,
  user,
  type RecordingProxy,
} from "../support/chat";
import { CONTINUE_INSTRUCTION } from "../../src/core/chat/continuation-request";
import { captureLog } from "../support/capture-log";

setDefaultTimeout(30_000);

const MODEL = "deepseek-v3";
/** Per-token prices in micro-won at 1,400 KRW per USD: deepseek 0.28 in / 0.42 out, together 1.25 both. */
const DEEPSEEK = { in: 378, out: 1540 }; // 0.27 / 1.1 USD per million tokens × 1,400
const TOGETHER = { in: 1750, out: 1750 };
const ON = { continue_on_failure: true };
const BROKEN = "tell me a long story [sim:tokens=200] [sim:drop@deepseek=2]";

for (const kind of await dbKinds()) {
  describe(`stream continuation (${kind})`, () => {
    let g: TestGateway;
    let proxy: RecordingProxy;
    beforeAll(async () => {
      ({ g, proxy } = await proxiedGateway(["together", "anthropic"], {}, kind));
    }, 60_000);
    afterAll(async () => {
      await g?.stop();
      proxy?.stop();
    });

    /** A tenant who consents to together (it trains on data). */
    async function consenting(credit = 1000) {
      const t = await tenant(g, credit);
      await g.admin("PATCH", `/v1/admin/users/${t.user.id}`, { xborder_training_consent: true });
      return t;
    }

    /** The call's usage event, its charges and the account's open holds, once its settle landed. */
    async function books(requestId: string, userId: string) {
      const db = g.gw.deps.db;
      const read = async () => ({
        usage: await db.query<any>(
          "select provider, model, status, prompt_tokens as p, completion_tokens as c, cost_micro::text as cost from usage_events where request_id = $1",
          [requestId],
        ),
        charges: (
          await db.query<{ a: string }>(
            "select (-amount_micro)::text as a from ledger_entries where request_id = $1 and kind = 'charge'",
            [requestId],
          )
        ).map((r) => BigInt(r.a)),
        open: Number(
          (
            await db.query<{ n: string }>(
              "select count(*)::text as n from holds where user_id = $1 and status = 'open'",
              [userId],
            )
          )[0]!.n,
        ),
      });
      let b = await read();
      await eventually(async () => (b = await read()).usage.length === 1 && b.open === 0);
      return b;
    }

    const price = (p: { prompt_tokens: number; completion_tokens: number }, at: { in: number; out: number }) =>
      BigInt(p.prompt_tokens * at.in + p.completion_tokens * at.out);

    test("without the opt-in a break ends the stream with the error event, and only deepseek's part is billed", async () => {
      const { user: u, key } = await consenting();
      g.gw.sim!.reset();
      proxy.clear();
      const res = await chatFetch(g, key.key, { model: MODEL, stream: true, messages: user(BROKEN) });
      const events = parseSse(await res.text()).filter((e) => e.data !== null);
      expect(events.at(-1)!.data).toBe("[DONE]");
      const err = events.at(-2)!.json.error;
      expect(err.code).toBe("upstream_error");
      expect(err.partial.length).toBeGreaterThan(0);
      expect(simChatCalls(g)).toEqual({ deepseek: 1 });
      const b = await books(res.headers.get("x-request-id")!, u.id);
      expect([b.usage[0].provider, b.usage[0].status]).toEqual(["deepseek", 502]);
      expect(b.charges).toEqual([BigInt(b.usage[0].cost)]);
    });

    test("chat completions: one uninterrupted stream, together continues from the text sent, both parts billed once", async () => {
      const { user: u, key } = await consenting();
      g.gw.sim!.reset();
      proxy.clear();
      const res = await chatFetch(g, key.key, {
        model: MODEL,
        stream: true,
        max_tokens: 500,
        messages: user(BROKEN),
        provider: ON,
      });
      expect(res.status).toBe(200);
      const rid = res.headers.get("x-request-id")!;
      const events = parseSse(await res.text()).filter((e) => e.data !== null);
      expect(events.at(-1)!.data).toBe("[DONE]");
      expect(events.some((e) => e.json?.error)).toBe(false);
      const chunks = events.slice(0, -1).map((e) => e.json);
      // One stream: one id and created, one role chunk, one finish, one final usage event.
      expect(new Set(chunks.map((c) => c.id)).size).toBe(1);
      expect(new Set(chunks.map((c) => c.created)).size).toBe(1);
      expect(chunks.filter((c) => c.choices[0]?.delta?.role)).toHaveLength(1);
      expect(chunks.filter((c) => c.choices[0]?.finish_reason)).toHaveLength(1);
      const final = chunks.at(-1);
      expect(final.choices).toEqual([]);
      const text = chunks.map((c) => c.choices[0]?.delta?.content ?? "").join("");
      expect(simChatCalls(g)).toEqual({ deepseek: 1, together: 1 });

      // The continuation request: the original messages, the text sent, the instruction; the budget left.
      const [asked] = proxy.chatBodies();
      const partial = asked.messages.at(-2).content;
      expect(asked.messages.slice(0, -2)).toEqual(user(BROKEN));
      expect(asked.messages.at(-2).role).toBe("assistant");
      expect(asked.messages.at(-1)).toEqual({ role: "user", content: CONTINUE_INSTRUCTION });
      expect(partial.startsWith("Simulated reply from deepseek/")).toBe(true);
      expect(asked.max_tokens).toBe(500 - Math.ceil(partial.length / 4));
      await proxy.bodies[0]!.ended;
      const rest = parseSse(proxy.bodies[0]!.response)
        .map((e) => e.json?.choices?.[0]?.delta?.content ?? "")
        .join("");
      expect(rest.startsWith("Simulated reply from together/")).toBe(true);
      expect(text).toBe(partial + rest);

      // How it was assembled, and the money: each part at its provider's price, summed, charged once.
      const [first, second] = final.continuation.parts;
      expect(final.continuation.parts).toHaveLength(2);
      expect(first).toMatchObject({
        provider: "deepseek",
        model: MODEL,
        estimated: true,
        completion_tokens: Math.ceil(partial.length / 4),
      });
      expect(second).toMatchObject({ provider: "together", model: MODEL, estimated: false, via: "instruction" });
      expect(final.usage.completion_tokens).toBe(first.completion_tokens + second.completion_tokens);
      expect(final.usage.prompt_tokens).toBe(first.prompt_tokens + second.prompt_tokens);
      const expected = price(first, DEEPSEEK) + price(second, TOGETHER);
      const b = await books(rid, u.id);
      expect(b.charges).toEqual([expected]);
      expect(b.usage[0]).toMatchObject({
        provider: "together",
        status: 200,
        p: final.usage.prompt_tokens,
        c: final.usage.completion_tokens,
        cost: String(expected),
      });
      expect(final.cost.krw).toBe(Math.round(Number(expected) / 1e6));
      // Counted for operators: deepseek broke, together finished.
      const metrics = await g.metrics();
      expect(metrics).toMatch(
        /^gateway_continuations_total\{ending="complete",from_provider="deepseek",to_provider="together"\} [1-9]\d*$/m,
      );
    });

    test("the OpenAI SDK reads the continued stream as one answer", async () => {
      const { key } = await consenting();
      const s = await sdk(g, key.key).chat.completions.create({
        model: MODEL,
        stream: true,
        messages: user(BROKEN),
        provider: ON,
      } as any);
      let text = "";
      let last: any;
      for await (const ch of s as any) {
        text += ch.choices[0]?.delta?.content ?? "";
        last = ch;
      }
      expect(text).toContain("Simulated reply from deepseek/");
      expect(text).toContain("Simulated reply from together/");
      expect(last.continuation.parts.map((p: any) => p.provider)).toEqual(["deepseek", "together"]);
    });

    test("Responses: one response, completed, whose text is both parts", async () => {
      const { user: u, key } = await consenting();
      g.gw.sim!.reset();
      const s = await sdk(g, key.key).responses.create({
        model: MODEL,
        stream: true,
        input: BROKEN,
        provider: ON,
      } as any);
      const types: string[] = [];
      let completed: any;
      let deltas = "";
      for await (const ev of s as any) {
        types.push(ev.type);
        if (ev.type === "response.output_text.delta") deltas += ev.delta;
        if (ev.type === "response.completed") completed = ev.response;
      }
      expect(types.filter((t) => t === "response.created")).toHaveLength(1);
      expect(types.filter((t) => t === "response.output_item.added")).toHaveLength(1);
      expect(types).not.toContain("error");
      expect(completed.status).toBe("completed");
      expect(completed.output[0].content[0].text).toBe(deltas);
      expect(deltas).toContain("Simulated reply from together/");
      expect(completed.continuation.parts.map((p: any) => p.provider)).toEqual(["deepseek", "together"]);
      expect(simChatCalls(g)).toEqual({ deepseek: 1, together: 1 });
      const [first, second] = completed.continuation.parts;
      const b = await books(requestIdOfResponse(completed.id), u.id);
      expect(b.charges).toEqual([price(first, DEEPSEEK) + price(second, TOGETHER)]);
    });

    test("Messages across protocols: an OpenAI stream continued by Claude as a prefill, one message", async () => {
      const { user: u, key } = await consenting();
      g.gw.sim!.reset();
      proxy.clear();
      const claude = new Anthropic({ apiKey: key.key, baseURL: g.url, maxRetries: 0 });
      // benchmark_smart reordered: its OpenAI leaf first, then its Claude leaf.
      const prefs = { order: ["openai", "anthropic"], continue_on_failure: true };
      const stream = claude.messages.stream({
        model: "benchmark_smart",
        max_tokens: 400,
        messages: [{ role: "user", content: "a story [sim:tokens=200] [sim:drop@openai=3]" }],
        provider: prefs,
      } as any);
      const kinds: string[] = [];
      let delta: any;
      stream.on("streamEvent", (ev: any) => {
        kinds.push(ev.type);
        if (ev.type === "message_delta") delta = ev;
      });
      const msg = await stream.finalMessage();
      expect(kinds.filter((k) => k === "message_start")).toHaveLength(1);
      expect(kinds.filter((k) => k === "message_stop")).toHaveLength(1);
      expect(msg.content).toHaveLength(1);
      const text = (msg.content[0] as any).text as string;
      expect(simChatCalls(g)).toEqual({ openai: 1, anthropic: 1 });
      // The prefill: Claude's request ends with the assistant turn holding the text sent.
      const [asked] = proxy.chatBodies();
      const prefill = asked.messages.at(-1);
      expect(prefill.role).toBe("assistant");
      const sent =
        typeof prefill.content === "string" ? prefill.content : prefill.content.map((b: any) => b.text).join("");
      expect(sent.startsWith("Simulated reply from openai/")).toBe(true);
      expect(text.startsWith(sent)).toBe(true);
      expect(text.slice(sent.length)).toContain("Simulated reply from anthropic/");
      expect(delta.continuation.parts.map((p: any) => [p.provider, p.via ?? null])).toEqual([
        ["openai", null],
        ["anthropic", "prefill"],
      ]);
      const b = await books(requestIdOfMessage(msg.id), u.id);
      expect(b.usage[0]).toMatchObject({ provider: "anthropic", model: candidates("benchmark_smart")[0], status: 200 });
      expect(b.charges).toEqual([BigInt(b.usage[0].cost)]);
      expect(msg.usage.output_tokens).toBe(
        delta.continuation.parts[0].completion_tokens + delta.continuation.parts[1].completion_tokens,
      );
    });

    test("the log line: deepseek's attempt `continued`, together's `ok`, together answered", async () => {
      const { key } = await consenting();
      let id = "";
      const out = await captureLog(async () => {
        const res = await chatFetch(g, key.key, { model: MODEL, stream: true, messages: user(BROKEN), provider: ON });
        id = res.headers.get("x-request-id")!;
        await res.text();
        await eventually(() => false, 300); // the line comes once the stream is settled
      });
      const line = out
        .split("\n")
        .filter((l) => l.startsWith("{"))
        .map((l) => JSON.parse(l))
        .find((j) => j.msg === "request" && j.request_id === id);
      expect([line.provider, line.stream, line.status]).toEqual(["together", "complete", 200]);
      expect(line.attempts.map((a: any) => [a.provider, a.outcome])).toEqual([
        ["deepseek", "continued"],
        ["together", "ok"],
      ]);
      // A reset connection: the stream ended without its terminator.
      expect(line.attempts[0].reason).toBe("truncated/truncated");
    });

    test("a continuation that breaks too ends the stream with the error event; both parts billed, no third provider", async () => {
      const { user: u, key } = await consenting();
      g.gw.sim!.reset();
      proxy.clear();
      // The prefill keeps the original last user message, so Claude's stream breaks as well.
      const messages = user("a story [sim:tokens=200] [sim:drop@openai=3] [sim:drop@anthropic=1]");
      const res = await chatFetch(g, key.key, {
        model: "benchmark_smart",
        stream: true,
        messages,
        provider: { order: ["openai", "anthropic"], continue_on_failure: true },
      });
      const events = parseSse(await res.text()).filter((e) => e.data !== null);
      expect(events.at(-1)!.data).toBe("[DONE]");
      const err = events.at(-2)!.json.error;
      expect(err.code).toBe("upstream_error");
      expect(simChatCalls(g)).toEqual({ openai: 1, anthropic: 1 });
      const prefill = proxy.chatBodies()[0].messages.at(-1);
      const first =
        typeof prefill.content === "string" ? prefill.content : prefill.content.map((b: any) => b.text).join("");
      expect(err.partial.startsWith(first)).toBe(true);
      const second = err.partial.slice(first.length);
      expect(second.length).toBeGreaterThan(0);
      const b = await books(res.headers.get("x-request-id")!, u.id);
      expect(b.usage[0]).toMatchObject({
        provider: "anthropic",
        status: 502,
        c: Math.ceil(first.length / 4) + Math.ceil(second.length / 4),
      });
      expect(b.charges).toEqual([BigInt(b.usage[0].cost)]);
      expect(b.charges[0]!).toBeGreaterThan(0n);
    });

    test("a Claude stream continued by Gemini with the instruction", async () => {
      const { user: u, key } = await consenting();
      g.gw.sim!.reset();
      // perfect: a Claude model first, then a Gemini model.
      const [claudeLeaf, geminiLeaf] = candidates("perfect");
      const res = await chatFetch(g, key.key, {
        model: "perfect",
        stream: true,
        messages: user("a story [sim:tokens=200] [sim:drop@anthropic=2]"),
        provider: ON,
      });
      const events = parseSse(await res.text()).filter((e) => e.data !== null);
      const final = events.at(-2)!.json;
      const text = events.map((e) => e.json?.choices?.[0]?.delta?.content ?? "").join("");
      expect(text.startsWith("Simulated reply from anthropic/")).toBe(true);
      expect(text).toContain("Simulated reply from google/");
      expect(final.continuation.parts.map((p: any) => [p.provider, p.model, p.via ?? null])).toEqual([
        ["anthropic", claudeLeaf, null],
        ["google", geminiLeaf, "instruction"],
      ]);
      expect(simChatCalls(g)).toEqual({ anthropic: 1, google: 1 });
      const b = await books(res.headers.get("x-request-id")!, u.id);
      expect(b.usage[0]).toMatchObject({ provider: "google", model: geminiLeaf, status: 200 });
      expect(b.charges).toEqual([BigInt(b.usage[0].cost)]);
    });

    test("a break before any content: the next candidate answers the request itself, deepseek costs nothing", async () => {
      const { user: u, key } = await consenting();
      g.gw.sim!.reset();
      proxy.clear();
      const messages = user("from the top [sim:tokens=200] [sim:drop@deepseek=0]");
      const res = await chatFetch(g, key.key, { model: MODEL, stream: true, max_tokens: 300, messages, provider: ON });
      const events = parseSse(await res.text()).filter((e) => e.data !== null);
      const final = events.at(-2)!.json;
      const text = events.map((e) => e.json?.choices?.[0]?.delta?.content ?? "").join("");
      expect(text.startsWith("Simulated reply from together/deepseek-ai/DeepSeek-V3: from the top")).toBe(true);
      const [asked] = proxy.chatBodies();
      expect([asked.messages, asked.max_tokens]).toEqual([messages, 300]);
      expect(final.continuation.parts[0]).toMatchObject({
        provider: "deepseek",
        prompt_tokens: 0,
        completion_tokens: 0,
        cost_usd: 0,
      });
      const b = await books(res.headers.get("x-request-id")!, u.id);
      expect(b.charges).toEqual([price(final.continuation.parts[1], TOGETHER)]);
    });

    test("no other candidate: the break ends the stream as without the opt-in", async () => {
      const { user: u, key } = await consenting();
      g.gw.sim!.reset();
      const res = await chatFetch(g, key.key, {
        model: "gpt-4o-mini",
        stream: true,
        messages: user("alone [sim:tokens=200] [sim:drop=2]"),
        provider: ON,
      });
      const events = parseSse(await res.text()).filter((e) => e.data !== null);
      expect(events.at(-2)!.json.error.code).toBe("upstream_error");
      expect(simChatCalls(g)).toEqual({ openai: 1 });
      const b = await books(res.headers.get("x-request-id")!, u.id);
      expect([b.usage[0].provider, b.usage[0].status]).toEqual(["openai", 502]);
      expect(b.charges).toEqual([BigInt(b.usage[0].cost)]);
    });

    test("a break inside a tool call is not continued", async () => {
      const { key } = await consenting();
      g.gw.sim!.reset();
      const tools = [
        {
          type: "function",
          function: {
            name: "lookup",
            parameters: {
              type: "object",
              properties: { q: { type: "string" }, n: { type: "integer" } },
              required: ["q", "n"],
            },
          },
        },
      ];
      const res = await chatFetch(g, key.key, {
        model: MODEL,
        stream: true,
        tools,
        tool_choice: { type: "function", function: { name: "lookup" } },
        messages: user("look it up [sim:drop@deepseek=1]"),
        provider: ON,
      });
      const events = parseSse(await res.text()).filter((e) => e.data !== null);
      expect(events.at(-2)!.json.error.code).toBe("upstream_error");
      expect(simChatCalls(g)).toEqual({ deepseek: 1 });
    });

    test("the hold covers a continuation: credit for one answer is not enough to opt in", async () => {
      const { key } = await consenting(3);
      const body = { model: MODEL, stream: true, max_tokens: 1000, messages: user("short") };
      const refused = await chatFetch(g, key.key, { ...body, provider: ON });
      expect(refused.status).toBe(402);
      expect(((await refused.json()) as any).detail.error).toBe("insufficient_credits");
      const plain = await chatFetch(g, key.key, body);
      expect(plain.status).toBe(200);
      await plain.text();
    });

    test("continue_on_failure must be a boolean (422), and nothing is called", async () => {
      const { key } = await consenting();
      g.gw.sim!.reset();
      const res = await chatFetch(g, key.key, {
        model: MODEL,
        stream: true,
        messages: user("x"),
        provider: { continue_on_failure: "yes" },
      });
      expect(res.status).toBe(422);
      const body = (await res.json()) as any;
      expect(body.detail[0].loc).toEqual(["body", "provider", "continue_on_failure"]);
      expect(simChatCalls(g)).toEqual({});
    });
  });
}

/** The request id inside a `resp_<32 hex>` / `msg_<32 hex>` id. */
function uuidOf(hex: string): string {
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
const requestIdOfResponse = (id: string) => uuidOf(id.replace(/^resp_/, ""));
const requestIdOfMessage = (id: string) => uuidOf(id.replace(/^msg_/, ""));
