import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestGateway, type TestGateway } from "../harness";

describe("key field edge cases", () => {
  let g: TestGateway;
  beforeAll(async () => {
    g = await startTestGateway({ db: "pglite" });
  });
  afterAll(async () => {
    await g?.stop();
  });

  test("numeric strings for integer fields are 422, not coerced", async () => {
    const u = await g.newUser();
    const r = await g.call("POST", "/v1/keys", { token: u.jwt, body: { monthly_budget_krw: "100" } });
    expect(r.status).toBe(422);
    expect(r.body.detail[0].loc.slice(0, 2)).toEqual(["body", "monthly_budget_krw"]);
  });

  test("an empty ip_allowlist means no restriction, like allowed_models", async () => {
    const u = await g.newUser();
    const k = await g.newKey(u, { ip_allowlist: [], allowed_models: [] });
    expect(k.ip_allowlist).toBeNull();
    expect(k.allowed_models).toBeNull();
    expect((await g.call("GET", "/v1/me", { token: k.key })).status).toBe(200);
  });
});
