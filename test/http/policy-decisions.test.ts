/**
 * GET /v1/routing-policies/{id}/decisions: the account's calls through a policy, each with the
 * X-Policy-Decision it was answered under (also in the activity); another account's policy is 404.
 */
import { describe, expect, test, setDefaultTimeout } from "bun:test";
import { suiteGateway } from "../harness";
import { fastUser } from "../support/http";

setDefaultTimeout(30_000);

describe("routing policy decisions", () => {
  const gw = suiteGateway();

  test("each call through the policy, newest first, with its decision header", async () => {
    const g = gw();
    const u = await fastUser(g, { creditKrw: 10_000 });
    const other = await fastUser(g);
    const key = (await g.newKey(u)).key;
    const policy = (
      await g.call("POST", "/v1/routing-policies", {
        token: u.jwt,
        body: {
          slug: "decide",
          display_name: "d",
          policy_type: "fallback",
          entries: [{ model: "gpt-4o-mini" }, { model: "claude-haiku-4-5" }],
        },
      })
    ).body;
    const headers: string[] = [];
    for (let i = 0; i < 2; i++) {
      const r = await g.call("POST", "/v1/chat/completions", {
        token: key,
        body: { model: "orch/decide", messages: [{ role: "user", content: "hi" }], max_tokens: 8 },
      });
      expect(r.status).toBe(200);
      headers.push(r.headers.get("x-policy-decision")!);
    }
    await g.call("POST", "/v1/chat/completions", {
      token: key,
      body: { model: "gpt-4o-mini", messages: [{ role: "user", content: "not a policy" }], max_tokens: 8 },
    });
    await g.gw.settlements.quiesce();
    const r = await g.call("GET", `/v1/routing-policies/${policy.id}/decisions`, { token: u.jwt });
    expect(r.status).toBe(200);
    expect(r.body.data.map((x: any) => x.policy_decision)).toEqual([...headers].reverse());
    expect(headers[0]).toStartWith("fallback; policy=decide; order=gpt-4o-mini,claude-haiku-4-5");
    expect(
      (await g.call("GET", `/v1/routing-policies/${policy.id}/decisions?limit=1`, { token: u.jwt })).body.data.length,
    ).toBe(1);
    expect((await g.call("GET", `/v1/routing-policies/${policy.id}/decisions?limit=0`, { token: u.jwt })).status).toBe(
      422,
    );
    expect((await g.call("GET", `/v1/routing-policies/${policy.id}/decisions`, { token: other.jwt })).status).toBe(404);
    const activity = (await g.call("GET", "/v1/activity", { token: u.jwt })).body.data;
    expect(activity.filter((x: any) => x.policy_decision).length).toBe(2);
  });
});
