/**
 * Issue 28 #9: a stored response belongs to the key that made it, as that key's activity does.
 * Another key of the same account (a second chat key, a `usage:read`-only key, a child key a
 * management key provisioned) cannot read, delete or continue it (`previous_response_id`,
 * `item_reference`): 404, nothing charged. A management key is not an API key here (401).
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from "bun:test";
import type { TestGateway } from "../harness";
import { money, proxiedGateway, tenant, type RecordingProxy } from "../support/chat";
import { postResponses } from "../responses/helpers";

setDefaultTimeout(60_000);

describe("stored responses are scoped to their key (RESPONSES_STORE=on)", () => {
  let g: TestGateway;
  let proxy: RecordingProxy;
  beforeAll(async () => {
    ({ g, proxy } = await proxiedGateway(["openai"], { RESPONSES_STORE: "on" }));
  }, 60_000);
  afterAll(async () => {
    await g?.stop();
    proxy?.stop();
  });

  test("sibling, usage:read and child keys get 404 on every door; the owner key keeps its response", async () => {
    const { user, key: owner } = await tenant(g, 1000);
    const sibling = await g.newKey(user);
    const reader = await g.newKey(user, { scopes: ["usage:read"] });
    const mgmt = (await g.call("POST", "/v1/management-keys", { token: user.jwt, body: { name: "m" } })).body;
    const child = (await g.call("POST", "/v1/provisioning/keys", { token: mgmt.key, body: { name: "tenant-1" } })).body;
    expect(child.key).toStartWith("sk-gw-");

    const secret = "my private diagnosis is 7731";
    const a: any = await (await postResponses(g, owner.key, { model: "gpt-4o-mini", input: secret })).json();
    expect(a.store).toBe(true);
    const before = await money(g, user.id);
    const eventsBefore = await events(g, user.id);

    for (const k of [sibling.key, reader.key, child.key]) {
      const got = await g.call("GET", `/v1/responses/${a.id}`, { token: k });
      expect(got.status).toBe(404);
      expect(JSON.stringify(got.body)).not.toContain("7731");
      expect((await g.call("DELETE", `/v1/responses/${a.id}`, { token: k })).status).toBe(404);
    }
    for (const k of [sibling.key, child.key]) {
      proxy.clear();
      const prev = await postResponses(g, k, { model: "gpt-4o-mini", input: "go on", previous_response_id: a.id });
      expect(prev.status).toBe(404);
      expect(((await prev.json()) as any).error).toMatchObject({ code: "not_found", param: "previous_response_id" });
      const ref = await postResponses(g, k, {
        model: "gpt-4o-mini",
        input: [{ type: "item_reference", id: a.output[0].id }],
      });
      expect(ref.status).toBe(404);
      expect(proxy.chatBodies()).toHaveLength(0);
    }
    // A management key is no API key: as on activity, it reads nothing of the account's calls.
    expect((await g.call("GET", `/v1/responses/${a.id}`, { token: mgmt.key })).status).toBe(401);
    expect((await g.call("DELETE", `/v1/responses/${a.id}`, { token: mgmt.key })).status).toBe(401);

    // Nothing was charged or recorded for the refusals.
    expect(await money(g, user.id)).toEqual(before);
    expect(await events(g, user.id)).toBe(eventsBefore);

    // The owner key still reads and continues it; the child's own response is the child's only.
    const got = await g.call("GET", `/v1/responses/${a.id}`, { token: owner.key });
    expect(got.status).toBe(200);
    expect(JSON.stringify(got.body)).toContain(a.output[0].content[0].text);
    proxy.clear();
    const cont = await postResponses(g, owner.key, {
      model: "gpt-4o-mini",
      input: "go on",
      previous_response_id: a.id,
    });
    expect(cont.status).toBe(200);
    expect(JSON.stringify(proxy.chatBodies().at(-1))).toContain(secret);
    const c: any = await (await postResponses(g, child.key, { model: "gpt-4o-mini", input: "child's own" })).json();
    expect((await g.call("GET", `/v1/responses/${c.id}`, { token: child.key })).status).toBe(200);
    expect((await g.call("GET", `/v1/responses/${c.id}`, { token: owner.key })).status).toBe(404);
    expect((await g.call("DELETE", `/v1/responses/${a.id}`, { token: owner.key })).status).toBe(200);
  });
});

async function events(g: TestGateway, userId: string): Promise<number> {
  await g.gw.settlements.quiesce(userId);
  const [r] = await g.gw.deps.db.query<any>("select count(*)::int as n from usage_events where user_id = $1", [userId]);
  return r.n;
}
