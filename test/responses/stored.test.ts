/**
 * RESPONSES_STORE=on: the Vercel AI SDK's default provider holds a multi-turn conversation
 * through item references on models of all three upstream protocols, each turn charged
 * once; previous_response_id continues a stored answer; GET and DELETE /v1/responses/{id}
 * over HTTP; another account's ids, unknown and expired ones are 404 before money moves.
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from "bun:test";
import { generateText, type ModelMessage } from "ai";
import { dbKinds, type TestGateway } from "../harness";
import { money, proxiedGateway, tenant, type RecordingProxy } from "../support/chat";
import { postResponses, streamFrames, tenant as tenantSdk } from "./helpers";
import { aiSdk, PROTOCOL_MODELS, references } from "./ai-sdk-helpers";

setDefaultTimeout(30_000);

/** The account's charges, usage events and open holds, from the database. */
async function books(g: TestGateway, userId: string) {
  await g.gw.settlements.quiesce(userId);
  const [row] = await g.gw.deps.db.query<any>(
    `select (select count(*) from ledger_entries where user_id = $1 and kind = 'charge')::int as charges,
            (select coalesce(sum(-amount_micro), 0)::text from ledger_entries where user_id = $1 and kind = 'charge') as charged,
            (select count(*) from usage_events where user_id = $1)::int as events,
            (select count(*) from usage_events where user_id = $1 and status = 200)::int as answered,
            (select count(*) from holds where user_id = $1 and status = 'open')::int as open_holds`,
    [userId],
  );
  return { ...row, charged: BigInt(row.charged) };
}

for (const kind of await dbKinds()) {
  describe(`stored responses on ${kind}`, () => {
    let g: TestGateway;
    let proxy: RecordingProxy;
    beforeAll(async () => {
      ({ g, proxy } = await proxiedGateway(
        ["openai", "anthropic", "google"],
        { RESPONSES_STORE: "on", RESPONSES_STORE_DAYS: "7" },
        kind,
      ));
    }, 60_000);
    afterAll(async () => {
      await g?.stop();
      proxy?.stop();
    });

    for (const model of PROTOCOL_MODELS) {
      test(`${model}: the AI SDK's second turn sends item references, they resolve, each turn is charged once`, async () => {
        const { user, key } = await tenant(g, 100);
        const before = await money(g, user.id);
        const { provider, sent } = aiSdk(g, key.key);
        const messages: ModelMessage[] = [{ role: "user", content: "name three rivers" }];
        const first = await generateText({ model: provider(model), messages, maxRetries: 0 });
        expect(first.text).toContain("Simulated reply");
        messages.push(...first.response.messages, { role: "user", content: "and three lakes" });
        proxy.clear();
        const second = await generateText({ model: provider(model), messages, maxRetries: 0 });
        expect(second.text).toContain("Simulated reply");

        const refs = references(sent[1]);
        expect(refs).toHaveLength(1);
        expect(refs[0]).toMatch(/^msg_[0-9a-f]{32}$/);
        expect(refs[0]).toBe((first.response.messages[0] as any).content[0].providerOptions.openai.itemId);
        // The provider saw the first answer's text in the second call: the reference was replayed.
        expect(JSON.stringify(proxy.chatBodies().at(-1))).toContain(first.text);

        const after = await money(g, user.id);
        const b = await books(g, user.id);
        expect(b).toMatchObject({ charges: 2, events: 2, answered: 2, open_holds: 0 });
        expect(b.charged).toBeGreaterThan(0n);
        expect(before.balance - after.balance).toBe(b.charged);
        expect(after.held).toBe(0n);
      });
    }

    test("previous_response_id continues a stored answer; GET returns it as answered; DELETE removes it", async () => {
      const { key } = await tenant(g, 100);
      const r1 = await postResponses(g, key.key, { model: "gpt-4o-mini", input: "first question about tides" });
      const a1: any = await r1.json();
      expect(a1).toMatchObject({ store: true, previous_response_id: null });
      proxy.clear();
      const r2 = await postResponses(g, key.key, {
        model: "claude-sonnet-4-5",
        input: "second question",
        previous_response_id: a1.id,
      });
      expect(r2.status).toBe(200);
      const a2: any = await r2.json();
      expect(a2.previous_response_id).toBe(a1.id);
      const upstream = JSON.stringify(proxy.chatBodies().at(-1));
      expect(upstream).toContain("first question about tides");
      expect(upstream).toContain(a1.output[0].content[0].text);

      const got = await g.call("GET", `/v1/responses/${a1.id}`, { token: key.key });
      expect(got.status).toBe(200);
      expect(got.body).toEqual(a1);

      const del = await g.call("DELETE", `/v1/responses/${a1.id}`, { token: key.key });
      expect(del.status).toBe(200);
      expect(del.body).toEqual({ id: a1.id, object: "response", deleted: true });
      expect((await g.call("GET", `/v1/responses/${a1.id}`, { token: key.key })).status).toBe(404);
      expect((await g.call("DELETE", `/v1/responses/${a1.id}`, { token: key.key })).status).toBe(404);
      // Its items went with it; the response that continued it still replays its own context.
      expect(
        (
          await postResponses(g, key.key, {
            model: "gpt-4o-mini",
            input: [{ type: "item_reference", id: a1.output[0].id }],
          })
        ).status,
      ).toBe(404);
      expect(
        (await postResponses(g, key.key, { model: "gpt-4o-mini", input: "third", previous_response_id: a2.id })).status,
      ).toBe(200);
    });

    test("another account's ids and unknown ids are 404 with the envelope body, before any charge", async () => {
      const owner = await tenant(g, 100);
      const a: any = await (await postResponses(g, owner.key.key, { model: "gpt-4o-mini", input: "private" })).json();
      const other = await tenant(g, 100);
      const before = await money(g, other.user.id);

      const get = await g.call("GET", `/v1/responses/${a.id}`, { token: other.key.key });
      expect(get.status).toBe(404);
      expect(get.body.error).toMatchObject({ type: "not_found", code: "not_found" });
      expect((await g.call("DELETE", `/v1/responses/${a.id}`, { token: other.key.key })).status).toBe(404);
      expect((await g.call("GET", `/v1/responses/${a.id}`, { token: owner.key.key })).status).toBe(200);

      const prev = await postResponses(
        g,
        other.key.key,
        { model: "gpt-4o-mini", input: "go on", previous_response_id: a.id },
        { "accept-language": "en" },
      );
      expect(prev.status).toBe(404);
      const pb: any = await prev.json();
      expect(pb.error).toMatchObject({
        code: "not_found",
        param: "previous_response_id",
        message: `Response '${a.id}' not found.`,
      });
      const ref = await postResponses(g, other.key.key, {
        model: "gpt-4o-mini",
        input: [{ type: "item_reference", id: a.output[0].id }],
      });
      expect(ref.status).toBe(404);
      const unknown = await postResponses(g, other.key.key, {
        model: "gpt-4o-mini",
        input: "x",
        previous_response_id: "resp_00000000000000000000000000000000",
      });
      expect(unknown.status).toBe(404);
      expect((await g.call("GET", "/v1/responses/resp_nope", { token: other.key.key })).status).toBe(404);
      expect((await g.call("GET", `/v1/responses/${a.id}`)).status).toBe(401);

      expect(await money(g, other.user.id)).toEqual(before);
      expect(await books(g, other.user.id)).toMatchObject({ charges: 0, events: 0, open_holds: 0 });
    });

    test("store: false is not kept; a streamed answer is kept before response.completed", async () => {
      const { key } = await tenant(g, 100);
      const plain: any = await (
        await postResponses(g, key.key, { model: "gpt-4o-mini", input: "not kept", store: false })
      ).json();
      expect(plain.store).toBe(false);
      expect((await g.call("GET", `/v1/responses/${plain.id}`, { token: key.key })).status).toBe(404);

      const { frames } = await streamFrames(g, key.key, { model: "gemini-2.5-flash", input: "kept while streaming" });
      const completed = frames.find((f) => f.json?.type === "response.completed")!.json.response;
      expect(completed.store).toBe(true);
      const got = await g.call("GET", `/v1/responses/${completed.id}`, { token: key.key });
      expect(got.status).toBe(200);
      expect(got.body.output).toEqual(completed.output);
      expect(got.body.cost).toEqual(completed.cost);
    });

    test("the openai SDK retrieves and deletes a stored response", async () => {
      const { sdk } = await tenantSdk(g);
      const created = await sdk.responses.create({ model: "gemini-2.5-flash", input: "kept for the SDK" });
      const got = await sdk.responses.retrieve(created.id);
      expect(got.id).toBe(created.id);
      expect(got.output_text).toBe(created.output_text);
      expect((got as any).store).toBe(true);
      await sdk.responses.delete(created.id);
      const e: any = await sdk.responses.retrieve(created.id).catch((x) => x);
      expect(e.status).toBe(404);
      expect(e.code).toBe("not_found");
    });

    test("an expired response is unknown, and the sweeper's purge deletes it with its items", async () => {
      const { user, key } = await tenant(g, 100);
      const a: any = await (await postResponses(g, key.key, { model: "gpt-4o-mini", input: "short-lived" })).json();
      const [row] = await g.gw.deps.db.query<any>(
        "select extract(epoch from expires_at - created_at)::int as secs from stored_responses where user_id = $1 and id = $2",
        [user.id, a.id],
      );
      expect(row.secs).toBe(7 * 86400);
      await g.gw.deps.db.query(
        "update stored_responses set expires_at = now() - interval '1 second' where user_id = $1",
        [user.id],
      );
      expect((await g.call("GET", `/v1/responses/${a.id}`, { token: key.key })).status).toBe(404);
      expect(
        (await postResponses(g, key.key, { model: "gpt-4o-mini", input: "x", previous_response_id: a.id })).status,
      ).toBe(404);
      const { StoredResponseRepo } = await import("../../src/db/repos/stored-responses");
      expect(await new StoredResponseRepo(g.gw.deps.db, 7).purgeExpired()).toBeGreaterThanOrEqual(1);
      const left = await g.gw.deps.db.query<any>(
        "select (select count(*) from stored_responses where user_id = $1)::int as r, (select count(*) from stored_response_items where user_id = $1)::int as i",
        [user.id],
      );
      expect(left[0]).toEqual({ r: 0, i: 0 });
    });
  });
}
