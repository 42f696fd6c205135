/**
 * The Vercel AI SDK's default provider (Responses API) with storage off, the default: its
 * second turn's item references are refused with a 400 that says how to get on
 * (RESPONSES_STORE=on, or `store: false`), before money moves, and `store: false` works.
 * Also: the web plugin's sources reach `streamText` (annotation.added events), a mid-stream
 * failure reads in our words, and a relayed chat stream's added chunks carry its id.
 */
import { describe, expect, test, setDefaultTimeout } from "bun:test";
import { APICallError, generateText, streamText, type ModelMessage } from "ai";
import { suiteGateway, type TestGateway } from "../harness";
import { money, parseSse as chatSse, tenant } from "../support/chat";
import { postResponses, streamFrames } from "./helpers";
import { aiSdk, PROTOCOL_MODELS, references } from "./ai-sdk-helpers";

setDefaultTimeout(30_000);

async function charges(g: TestGateway, userId: string): Promise<number> {
  await g.gw.settlements.quiesce(userId);
  const [r] = await g.gw.deps.db.query<{ n: number }>(
    "select count(*)::int as n from ledger_entries where user_id = $1 and kind = 'charge'",
    [userId],
  );
  return r!.n;
}

describe("the AI SDK's default provider with storage off", () => {
  const gw = suiteGateway();

  for (const model of PROTOCOL_MODELS) {
    test(`${model}: a second turn by reference is 400 saying what to do; store: false works`, async () => {
      const { user, key } = await tenant(gw(), 100);
      const { provider, sent } = aiSdk(gw(), key.key, { headers: { "accept-language": "en" } });
      const messages: ModelMessage[] = [{ role: "user", content: "name three rivers" }];
      const first = await generateText({ model: provider(model), messages, maxRetries: 0 });
      messages.push(...first.response.messages, { role: "user", content: "and three lakes" });
      const afterFirst = await money(gw(), user.id);

      const e: any = await generateText({ model: provider(model), messages, maxRetries: 0 }).catch((x) => x);
      expect(references(sent[1])).toHaveLength(1);
      expect(APICallError.isInstance(e)).toBe(true);
      expect(e.statusCode).toBe(400);
      expect(e.message).toContain("RESPONSES_STORE=on");
      expect(e.message).toContain("store: false");
      expect(e.message).toContain("providerOptions.openai.store");
      expect(e.data.error).toMatchObject({ param: "input[1]" });
      expect(await money(gw(), user.id)).toEqual(afterFirst);
      expect(await charges(gw(), user.id)).toBe(1);

      const second = await generateText({
        model: provider(model),
        messages,
        maxRetries: 0,
        providerOptions: { openai: { store: false } },
      });
      expect(second.text).toContain("Simulated reply");
      expect(sent[2].store).toBe(false);
      expect(references(sent[2])).toEqual([]);
      expect(sent[2].input[1]).toMatchObject({ role: "assistant" });
      expect(await charges(gw(), user.id)).toBe(2);
    });
  }

  test("the 400 is in Korean by default; previous_response_id stays accepted and ignored", async () => {
    const { key } = await tenant(gw(), 100);
    const r = await postResponses(gw(), key.key, {
      model: "gpt-4o-mini",
      input: [{ type: "item_reference", id: "msg_00000000000000000000000000000000" }],
    });
    expect(r.status).toBe(400);
    const b: any = await r.json();
    expect(b.error.message).toContain("RESPONSES_STORE=on");
    expect(b.error.message).toContain("저장");
    const ignored = await postResponses(gw(), key.key, {
      model: "gpt-4o-mini",
      input: "hi",
      previous_response_id: "resp_00000000000000000000000000000000",
    });
    expect(ignored.status).toBe(200);
    const a: any = await ignored.json();
    expect(a).toMatchObject({ store: false, previous_response_id: null });
    expect((await gw().call("GET", `/v1/responses/${a.id}`, { token: key.key })).status).toBe(404);
  });

  for (const model of PROTOCOL_MODELS) {
    test(`${model}: streamText with the web plugin yields the sources`, async () => {
      const { key } = await tenant(gw(), 100);
      const { provider } = aiSdk(gw(), key.key, { extra: { plugins: [{ id: "web", max_results: 2 }] } });
      const r = streamText({ model: provider(model), prompt: "rivers of Korea", maxRetries: 0 });
      const sources: any[] = [];
      for await (const part of r.fullStream) if (part.type === "source") sources.push(part);
      expect(sources).toHaveLength(2);
      for (const s of sources)
        expect(s).toMatchObject({
          sourceType: "url",
          url: expect.stringMatching(/^https:\/\//),
          title: expect.any(String),
        });
      expect(new Set(sources.map((s) => s.url)).size).toBe(2);
    });
  }

  test("annotation.added events: one per source, OpenAI's fields, after the deltas and before output_text.done", async () => {
    const { key } = await tenant(gw(), 100);
    const { frames } = await streamFrames(gw(), key.key, {
      model: "claude-sonnet-4-5",
      input: "rivers of Korea",
      plugins: [{ id: "web", max_results: 3 }],
    });
    const types = frames.map((f) => f.json?.type);
    const added = frames.filter((f) => f.json?.type === "response.output_text.annotation.added").map((f) => f.json);
    expect(added).toHaveLength(3);
    const done = frames.find((f) => f.json?.type === "response.output_text.done")!.json;
    added.forEach((a, i) => {
      expect(a).toMatchObject({
        item_id: done.item_id,
        output_index: done.output_index,
        content_index: 0,
        annotation_index: i,
        annotation: { type: "url_citation", url: expect.any(String), title: expect.any(String) },
      });
      expect(
        frames.find((f) => f.json?.type === "response.output_text.annotation.added" && f.json.annotation_index === i)!
          .event,
      ).toBe("response.output_text.annotation.added");
    });
    const first = types.indexOf("response.output_text.annotation.added");
    expect(types.lastIndexOf("response.output_text.delta")).toBeLessThan(first);
    expect(types.indexOf("response.output_text.done")).toBe(first + 3);
    const completed = frames.find((f) => f.json?.type === "response.completed")!.json.response;
    expect(completed.output[0].content[0].annotations).toEqual(added.map((a) => a.annotation));
  });

  for (const lang of ["en", "ko"] as const) {
    test(`a mid-stream failure reads in our words (${lang}), never the HTTP client's`, async () => {
      const { key } = await tenant(gw(), 100);
      const { provider } = aiSdk(gw(), key.key, { headers: { "accept-language": lang } });
      for (const model of PROTOCOL_MODELS) {
        const r = streamText({
          model: provider(model),
          prompt: "long story [sim:tokens=200] [sim:drop=2]",
          maxRetries: 0,
          onError: () => {},
        });
        let error: any = null;
        for await (const part of r.fullStream) if (part.type === "error") error = part.error;
        expect(error?.message).toBe(
          lang === "en" ? "The provider's response stream broke off." : "제공자의 응답 스트림이 중간에 끊겼습니다.",
        );
        expect(error.code).toBe("upstream_error");
        expect(JSON.stringify(error)).not.toMatch(/verbose|fetch\(|socket/i);
      }
    });
  }

  test("a relayed chat stream's annotation chunk carries the stream's id and created", async () => {
    const { key } = await tenant(gw(), 100);
    const res = await fetch(gw().url + "/v1/chat/completions", {
      method: "POST",
      headers: { authorization: `Bearer ${key.key}`, "content-type": "application/json" },
      body: JSON.stringify({
        model: "gpt-4o-mini",
        messages: [{ role: "user", content: "rivers of Korea" }],
        stream: true,
        plugins: [{ id: "web", max_results: 2 }],
      }),
    });
    const chunks = chatSse(await res.text())
      .filter((e) => e.json)
      .map((e) => e.json);
    const annotated = chunks.find((c) => c.choices?.[0]?.delta?.annotations);
    expect(annotated.choices[0].delta.annotations).toHaveLength(2);
    expect(annotated.id).toBe(chunks[0].id);
    expect(annotated.created).toBe(chunks[0].created);
    expect(typeof annotated.id).toBe("string");
    expect(typeof annotated.created).toBe("number");
    for (const c of chunks)
      expect([c.id, c.created, c.object]).toEqual([chunks[0].id, chunks[0].created, "chat.completion.chunk"]);
  });
});
