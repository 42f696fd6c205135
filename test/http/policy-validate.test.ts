/** POST /v1/routing-policies/validate: the create route's checks, answered without storing anything. */
import { describe, expect, test, setDefaultTimeout } from "bun:test";
import { suiteGateway } from "../harness";
import { fastUser } from "../support/http";

setDefaultTimeout(30_000);

describe("routing policy validation", () => {
  const gw = suiteGateway();
  const body = (extra: Record<string, unknown> = {}) => ({
    slug: "check-me",
    display_name: "Check",
    policy_type: "fallback",
    entries: [{ model: "openai/gpt-4o-mini" }],
    ...extra,
  });

  test("a valid policy comes back as it would be stored; nothing is stored", async () => {
    const g = gw();
    const u = await fastUser(g);
    const r = await g.call("POST", "/v1/routing-policies/validate", { token: u.jwt, body: body() });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ valid: true, entries: [{ model: "gpt-4o-mini", retries: 0 }], config: {} });
    expect((await g.call("GET", "/v1/routing-policies", { token: u.jwt })).body.total).toBe(0);
  });

  test("errors name the field: 422 for the schema, 400 invalid_policy_entry for a model", async () => {
    const g = gw();
    const u = await fastUser(g);
    const schema = await g.call("POST", "/v1/routing-policies/validate", {
      token: u.jwt,
      body: body({ config: { nonsense: 1 } }),
    });
    expect(schema.status).toBe(422);
    expect(schema.body.detail.some((d: any) => d.loc[0] === "body" && d.loc[1] === "config")).toBe(true);
    const model = await g.call("POST", "/v1/routing-policies/validate", {
      token: u.jwt,
      body: body({ entries: [{ model: "gpt-4o-mini" }, { model: "no-such-model" }] }),
    });
    expect(model.status).toBe(400);
    expect(model.body.detail.error).toBe("invalid_policy_entry");
    expect(model.body.detail.message).toStartWith("entries[1]:");
    expect((await g.call("POST", "/v1/routing-policies/validate", { body: body() })).status).toBe(401);
  });
});
