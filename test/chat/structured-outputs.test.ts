/**
 * Structured outputs end to end with the official `openai` SDK over real sockets, on a model
 * of each protocol (OpenAI, Anthropic, Gemini): `chat.completions.parse` with
 * `zodResponseFormat`, `chat.completions.stream`, `json_object`, and the Responses API's
 * `text.format` (`responses.parse` with `zodTextFormat`). A recording proxy in front of the
 * Anthropic simulator shows which path (native `output_config` or the forced tool) left the
 * gateway. The books are read in SQL: one charge per answered call, at the call's tokens; a
 * malformed response_format is a 422 that moves no money.
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from "bun:test";
import { zodResponseFormat, zodTextFormat } from "openai/helpers/zod";
import { z } from "zod";
import { dbKinds, type TestGateway } from "../harness";
import { chat, chatFetch, money, parseSse, proxiedGateway, type RecordingProxy, tenant, user } from "../support/chat";

setDefaultTimeout(30_000);

const Person = z.object({
  name: z.string(),
  age: z.number().int(),
  role: z.enum(["admin", "user"]),
  email: z.string().email(),
  address: z.object({ city: z.string() }),
  tags: z.array(z.string()),
  nick: z.string().nullable(),
});
// The simulator fills a schema deterministically (docs/simulator.md, "Structured outputs").
const SAMPLE: z.infer<typeof Person> = {
  name: "sample name",
  age: 1,
  role: "admin",
  email: "sample@example.com",
  address: { city: "sample city" },
  tags: ["sample tags"],
  nick: "sample nick",
};
const MODELS = ["gpt-4o-mini", "claude-sonnet-4-5", "gemini-2.5-flash"];
const tokens = (s: string) => Math.ceil(s.length / 4);

/** Charges and usage of one request, from the ledger. */
async function books(g: TestGateway, requestId: string) {
  await g.gw.settlements.quiesce();
  const charges = await g.gw.deps.db.query<{ a: string }>(
    "select (-amount_micro)::text as a from ledger_entries where request_id = $1 and kind = 'charge'",
    [requestId],
  );
  const usage = await g.gw.deps.db.query<{ p: number; c: number; cost: string }>(
    "select prompt_tokens as p, completion_tokens as c, cost_micro::text as cost from usage_events where request_id = $1",
    [requestId],
  );
  return {
    charges: charges.map((r) => BigInt(r.a)),
    usage: usage.map((u) => ({ p: Number(u.p), c: Number(u.c), cost: BigInt(u.cost) })),
  };
}

for (const kind of await dbKinds()) {
  describe(`structured outputs on ${kind}`, () => {
    let g: TestGateway;
    let proxy: RecordingProxy;
    beforeAll(async () => {
      ({ g, proxy } = await proxiedGateway(["anthropic"], {}, kind));
    }, 60_000);
    afterAll(async () => {
      await g?.stop();
      proxy?.stop();
    });
    const lastAnthropicBody = () => proxy.chatBodies().at(-1);

    test("chat.completions.parse with zodResponseFormat: the parsed object on every protocol", async () => {
      const { sdk } = await tenant(g, 100);
      for (const model of MODELS) {
        proxy.clear();
        const r = await sdk.chat.completions.parse({
          model,
          messages: user("Who is the admin?"),
          response_format: zodResponseFormat(Person, "person"),
        });
        const message = r.choices[0]!.message;
        expect([model, message.parsed]).toEqual([model, SAMPLE]);
        expect(Person.parse(message.parsed)).toEqual(SAMPLE);
        expect(r.choices[0]!.finish_reason).toBe("stop");
        if (model.startsWith("claude")) {
          // Claude Sonnet 4.5 takes it natively: output_config, no tool.
          expect(lastAnthropicBody().output_config.format.type).toBe("json_schema");
          expect(lastAnthropicBody().output_config.format.schema.properties.age.description).toContain("minimum");
          expect(lastAnthropicBody().tools).toBeUndefined();
        }
      }
    });

    test("chat.completions.stream with response_format: the final completion parses", async () => {
      const { sdk } = await tenant(g, 100);
      for (const model of MODELS) {
        const stream = sdk.chat.completions.stream({
          model,
          messages: user("Stream the admin"),
          response_format: zodResponseFormat(Person, "person"),
        });
        let deltas = 0;
        stream.on("content.delta", () => deltas++);
        const final = await stream.finalChatCompletion();
        expect([model, final.choices[0]!.message.parsed]).toEqual([model, SAMPLE]);
        expect(deltas).toBeGreaterThan(1);
      }
    });

    test("json_object: a JSON object on every protocol, answered and streamed", async () => {
      const { key } = await tenant(g, 100);
      for (const model of MODELS) {
        const body = { model, messages: user("JSON please"), response_format: { type: "json_object" } };
        const r = await chat(g, key.key, body);
        const content = JSON.parse(r.body.choices[0].message.content);
        expect([model, typeof content, Array.isArray(content), r.body.choices[0].finish_reason]).toEqual([
          model,
          "object",
          false,
          "stop",
        ]);
        const res = await chatFetch(g, key.key, { ...body, stream: true });
        const chunks = parseSse(await res.text())
          .map((e) => e.json)
          .filter((j) => j?.choices?.length);
        expect(JSON.parse(chunks.map((c) => c.choices[0].delta.content ?? "").join(""))).toEqual(content);
      }
    });

    test("json_object on Claude takes the forced tool; the answer is its input, billed at the call's tokens", async () => {
      const { user: u, key } = await tenant(g, 100);
      const before = await money(g, u.id);
      proxy.clear();
      const r = await chat(g, key.key, {
        model: "claude-sonnet-4-5",
        messages: user("Give me JSON"),
        response_format: { type: "json_object" },
      });
      expect(r.status).toBe(200);
      const sent = lastAnthropicBody();
      expect(sent.tools.map((t: any) => t.name)).toEqual(["json_response"]);
      expect(sent.tool_choice).toEqual({ type: "tool", name: "json_response" });
      const content = r.body.choices[0].message.content;
      // The tool's input schema is any object; the simulator's sample of it is the empty one.
      expect(JSON.parse(content)).toEqual({});
      expect(r.body.choices[0].finish_reason).toBe("stop");
      expect(r.body.choices[0].message.tool_calls).toBeUndefined();
      // The simulator bills a tool call as tokens(name) + tokens(input JSON): the call's tokens.
      expect(r.body.usage.completion_tokens).toBe(tokens("json_response") + tokens(content));

      const rid = r.headers.get("x-request-id")!;
      const b = await books(g, rid);
      expect(b.usage).toEqual([
        { p: r.body.usage.prompt_tokens, c: r.body.usage.completion_tokens, cost: b.charges[0]! },
      ]);
      expect(b.charges).toHaveLength(1);
      // claude-sonnet-4-5: 3 / 15 USD per Mtok at 1400 KRW/USD, rounded up to the micro-won.
      const num =
        (BigInt(r.body.usage.prompt_tokens) * 3_000_000n + BigInt(r.body.usage.completion_tokens) * 15_000_000n) *
        1_400_000n;
      const expected = (num + 999_999_999n) / 1_000_000_000n;
      expect(b.charges[0]).toBe(expected < 100_000n ? 100_000n : expected);
      const after = await money(g, u.id);
      expect(before.balance - after.balance).toBe(b.charges[0]!);
      expect(after.held).toBe(0n);
    });

    test("a streamed forced tool arrives as content deltas that concatenate to JSON, finish stop", async () => {
      const { key } = await tenant(g, 100);
      const map = {
        type: "object",
        properties: { scores: { type: "object", additionalProperties: { type: "number" } } },
        required: ["scores"],
      };
      proxy.clear();
      const res = await chatFetch(g, key.key, {
        model: "claude-sonnet-4-5",
        stream: true,
        messages: user("Scores please"),
        response_format: { type: "json_schema", json_schema: { name: "scores", schema: map } },
      });
      expect(res.status).toBe(200);
      const events = parseSse(await res.text());
      // A map is outside Anthropic's native subset: the forced tool, even on Sonnet 4.5.
      expect(lastAnthropicBody().tool_choice).toEqual({ type: "tool", name: "json_response" });
      const chunks = events.map((e) => e.json).filter((j) => j?.choices?.length);
      const content = chunks.map((c) => c.choices[0].delta.content ?? "").join("");
      expect(JSON.parse(content)).toEqual({ scores: {} });
      expect(chunks.some((c) => c.choices[0].delta.tool_calls)).toBe(false);
      expect(chunks.at(-1).choices[0].finish_reason).toBe("stop");
      expect(events.at(-1)!.data).toBe("[DONE]");
    });

    test("Responses API text.format reaches the same mapping: responses.parse on every protocol", async () => {
      const { sdk } = await tenant(g, 100);
      for (const model of MODELS) {
        proxy.clear();
        const r = await sdk.responses.parse({
          model,
          input: "Who is the admin?",
          text: { format: zodTextFormat(Person, "person") },
        });
        expect([model, r.output_parsed]).toEqual([model, SAMPLE]);
        expect(r.text?.format?.type).toBe("json_schema");
        if (model.startsWith("claude"))
          expect(lastAnthropicBody().output_config.format.schema.required).toContain("nick");
      }
      const stream = sdk.responses.stream({
        model: "gemini-2.5-flash",
        input: "Stream the admin",
        text: { format: zodTextFormat(Person, "person") },
      });
      expect((await stream.finalResponse()).output_parsed).toEqual(SAMPLE);
      // json_object on Claude: the forced tool, streamed as output_text deltas.
      proxy.clear();
      let text = "";
      for await (const ev of await sdk.responses.create({
        model: "claude-sonnet-4-5",
        input: "JSON",
        text: { format: { type: "json_object" } },
        stream: true,
      })) {
        if (ev.type === "response.output_text.delta") text += ev.delta;
      }
      expect(lastAnthropicBody().tool_choice).toEqual({ type: "tool", name: "json_response" });
      expect(JSON.parse(text)).toEqual({});
    });

    test("a malformed response_format or text.format is a 422 at its loc; no money moves", async () => {
      const { user: u, key } = await tenant(g, 100);
      const before = await money(g, u.id);
      const cases: [unknown, (string | number)[]][] = [
        [{ type: "json_schema" }, ["body", "response_format", "json_schema"]],
        [
          { type: "json_schema", json_schema: { schema: { type: "object" } } },
          ["body", "response_format", "json_schema", "name"],
        ],
        [
          { type: "json_schema", json_schema: { name: "x", schema: "{}" } },
          ["body", "response_format", "json_schema", "schema"],
        ],
        [{ type: "xml" }, ["body", "response_format", "type"]],
        ["json", ["body", "response_format"]],
      ];
      for (const [rf, loc] of cases) {
        const r = await chat(g, key.key, { model: "claude-sonnet-4-5", messages: user("x"), response_format: rf });
        expect([rf, r.status, r.body.detail.map((d: any) => d.loc)]).toEqual([rf, 422, expect.arrayContaining([loc])]);
        expect(r.body.error.code).toBe("validation_error");
      }
      for (const [format, loc] of [
        [{ type: "json_schema", schema: {} }, ["body", "text", "format", "name"]],
        [{ type: "json_schema", name: "x" }, ["body", "text", "format", "schema"]],
        [{ type: "yaml" }, ["body", "text", "format", "type"]],
      ] as const) {
        const resp = await g.call("POST", "/v1/responses", {
          token: key.key,
          body: { model: "claude-sonnet-4-5", input: "x", text: { format } },
        });
        expect([format, resp.status, resp.body.detail.map((d: any) => d.loc)]).toEqual([
          format,
          422,
          expect.arrayContaining([loc]),
        ]);
      }
      expect(await money(g, u.id)).toEqual(before);
      const rows = await g.gw.deps.db.query<{ n: string }>(
        "select count(*)::text as n from ledger_entries where user_id = $1 and kind <> 'topup'",
        [u.id],
      );
      expect(rows[0]!.n).toBe("0");
    });
  });
}
