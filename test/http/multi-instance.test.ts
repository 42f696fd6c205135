/**
 * Two gateway instances on one PostgreSQL database, each with its own connection pool: a key
 * change made through one is enforced by the other within a second, even when the other had
 * the key cached.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { postgresAvailable, type TestGateway } from "../harness";
import { fastUser, twoInstancesOnPostgres, within } from "../support/http";

setDefaultTimeout(30_000);

const pg = await postgresAvailable();

describe.skipIf(!pg)("two instances on one PostgreSQL database", () => {
  let a: TestGateway;
  let b: TestGateway;
  let stop: () => Promise<void>;
  beforeAll(async () => {
    ({ a, b, stop } = await twoInstancesOnPostgres());
  }, 60_000);
  afterAll(async () => {
    await stop?.();
  });

  const meOn = async (g: TestGateway, token: string) => (await g.call("GET", "/v1/me", { token })).status;

  test("a key deleted on A is refused by B within a second (B had it cached)", async () => {
    const u = await fastUser(a);
    const k = await a.newKey(u);
    expect(await meOn(b, k.key)).toBe(200); // B caches the key
    expect(await meOn(b, k.key)).toBe(200);
    expect((await a.call("DELETE", `/v1/keys/${k.id}`, { token: u.jwt })).status).toBe(200);
    expect(await meOn(a, k.key)).toBe(401);
    const took = await within(1000, async () => (await meOn(b, k.key)) === 401);
    expect(took).not.toBeNull();
    // And it stays refused.
    expect(await meOn(b, k.key)).toBe(401);
  });

  test("deactivation, allowlist changes and account deletion on A reach B within a second", async () => {
    const u = await fastUser(a);
    const k = await a.newKey(u);
    expect(await meOn(b, k.key)).toBe(200);
    await a.call("PATCH", `/v1/keys/${k.id}`, { token: u.jwt, body: { is_active: false } });
    expect(await within(1000, async () => (await meOn(b, k.key)) === 401)).not.toBeNull();
    await a.call("PATCH", `/v1/keys/${k.id}`, {
      token: u.jwt,
      body: { is_active: true, ip_allowlist: ["10.0.0.0/8"] },
    });
    expect(await within(1000, async () => (await meOn(b, k.key)) === 403)).not.toBeNull();
    await a.call("PATCH", `/v1/keys/${k.id}`, { token: u.jwt, body: { ip_allowlist: null } });
    expect(await within(1000, async () => (await meOn(b, k.key)) === 200)).not.toBeNull();
    await a.admin("PATCH", `/v1/admin/users/${u.id}`, { deleted: true });
    expect(await within(1000, async () => (await meOn(b, k.key)) === 401)).not.toBeNull();
  });

  test("a child key deleted through the provisioning API on B is refused by A within a second", async () => {
    const u = await fastUser(a);
    const m = (await a.call("POST", "/v1/management-keys", { token: u.jwt, body: { name: "m" } })).body;
    const child = (await b.call("POST", "/v1/provisioning/keys", { token: m.key, body: { name: "c" } })).body;
    expect(await meOn(a, child.key)).toBe(200);
    expect((await b.call("DELETE", `/v1/provisioning/keys/${child.id}`, { token: m.key })).status).toBe(200);
    expect(await within(1000, async () => (await meOn(a, child.key)) === 401)).not.toBeNull();
  });

  test("a management key deleted with cascade=true on A: its children are refused by B within a second", async () => {
    const u = await fastUser(a);
    const m = (await a.call("POST", "/v1/management-keys", { token: u.jwt, body: { name: "leaked" } })).body;
    const kids = [];
    for (const name of ["c1", "c2"])
      kids.push((await a.call("POST", "/v1/provisioning/keys", { token: m.key, body: { name } })).body);
    for (const c of kids) expect(await meOn(b, c.key)).toBe(200); // B caches them
    expect((await a.call("DELETE", `/v1/management-keys/${m.id}?cascade=true`, { token: u.jwt })).status).toBe(200);
    for (const c of kids) expect(await within(1000, async () => (await meOn(b, c.key)) === 401)).not.toBeNull();
  });

  test("settings changed on A are served by B within 5 seconds", async () => {
    const before = (await b.admin("GET", "/v1/admin/settings")).body["routing.orchestrators_enabled"];
    await a.admin("PATCH", "/v1/admin/settings", { "routing.orchestrators_enabled": !before });
    const took = await within(
      5000,
      async () => (await b.admin("GET", "/v1/admin/settings")).body["routing.orchestrators_enabled"] === !before,
    );
    expect(took).not.toBeNull();
    await a.admin("PATCH", "/v1/admin/settings", { "routing.orchestrators_enabled": before });
  });
});
