/**
 * Tenant isolation: for every resource (keys, management keys, child keys, routing policies
 * and their decisions, video jobs and their content, the usage report, the activity and its
 * calls, feedback), another tenant's id is answered
 * exactly like an id that does not exist (404, the same body), lists never show it, and a
 * change attempted through it changes nothing.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestGateway, type TestGateway, type TestUser } from "../harness";
import { fastUser } from "../support/http";

let g: TestGateway;
let alice: TestUser;
let mallory: TestUser;
let aliceKey: any;
let aliceKey2: any;
let malloryKey: any;

beforeAll(async () => {
  g = await startTestGateway({
    db: "pglite",
    env: { VIDEO_POLL_WORKERS: "0", STATS_ROLLUP_INTERVAL_MS: "100", STATS_MIN_DISTINCT_ACCOUNTS: "1" },
  });
  alice = await fastUser(g, { creditKrw: 50_000 });
  mallory = await fastUser(g, { creditKrw: 50_000 });
  aliceKey = await g.newKey(alice, { name: "alice-main" });
  aliceKey2 = await g.newKey(alice, { name: "alice-second" });
  malloryKey = await g.newKey(mallory, { name: "mallory", scopes: ["chat", "usage:read"] });
}, 60_000);
afterAll(async () => {
  await g?.stop();
});

/** A 404 for someone else's id must be indistinguishable from a 404 for a random id. */
async function sameAsMissing(
  method: string,
  path: (id: string) => string,
  theirs: string,
  token: string,
  body?: unknown,
) {
  const r = await g.call(method, path(theirs), { token, body });
  const missing = await g.call(method, path(crypto.randomUUID()), { token, body });
  expect({ path: path("{id}"), status: r.status }).toEqual({ path: path("{id}"), status: 404 });
  expect(missing.status).toBe(404);
  expect(r.body).toEqual(missing.body);
  expect(JSON.stringify(r.body)).not.toContain(theirs);
}

describe("tenant isolation", () => {
  test("API keys: another account's key cannot be read, changed or deleted", async () => {
    await sameAsMissing("PATCH", (id) => `/v1/keys/${id}`, aliceKey.id, mallory.jwt, {
      name: "pwned",
      is_active: false,
    });
    await sameAsMissing("DELETE", (id) => `/v1/keys/${id}`, aliceKey.id, mallory.jwt);
    const list = await g.call("GET", "/v1/keys", { token: mallory.jwt });
    expect(JSON.stringify(list.body)).not.toContain(aliceKey.id);
    const usage = await g.call("GET", "/v1/keys/usage", { token: mallory.jwt });
    expect(usage.status).toBe(200);
    expect(JSON.stringify(usage.body)).not.toContain(aliceKey.id);
    // Untouched.
    const mine = (await g.call("GET", "/v1/keys", { token: alice.jwt })).body;
    const rec = (mine.items ?? mine.data ?? mine).find((k: any) => k.id === aliceKey.id);
    expect(rec).toMatchObject({ name: "alice-main", is_active: true });
    expect((await g.call("GET", "/v1/me", { token: aliceKey.key })).status).toBe(200);
  });

  test("management keys and their child keys", async () => {
    const am = (await g.call("POST", "/v1/management-keys", { token: alice.jwt, body: { name: "alice-mgmt" } })).body;
    const mm = (await g.call("POST", "/v1/management-keys", { token: mallory.jwt, body: { name: "mallory-mgmt" } }))
      .body;
    await sameAsMissing("DELETE", (id) => `/v1/management-keys/${id}`, am.id, mallory.jwt);
    expect(JSON.stringify((await g.call("GET", "/v1/management-keys", { token: mallory.jwt })).body)).not.toContain(
      am.id,
    );

    const child = (await g.call("POST", "/v1/provisioning/keys", { token: am.key, body: { name: "alice-child" } }))
      .body;
    // Through another account's management key: neither the child nor an ordinary key of Alice.
    await sameAsMissing("DELETE", (id) => `/v1/provisioning/keys/${id}`, child.id, mm.key);
    await sameAsMissing("DELETE", (id) => `/v1/provisioning/keys/${id}`, aliceKey2.id, mm.key);
    const theirList = JSON.stringify((await g.call("GET", "/v1/provisioning/keys", { token: mm.key })).body);
    expect(theirList).not.toContain(child.id);
    expect(theirList).not.toContain(aliceKey.id);
    // A management key lists only the keys it provisioned, not its owner's other keys.
    const ownList = JSON.stringify((await g.call("GET", "/v1/provisioning/keys", { token: am.key })).body);
    expect(ownList).toContain(child.id);
    expect(ownList).not.toContain(aliceKey.id);
    expect((await g.call("GET", "/v1/me", { token: child.key })).status).toBe(200);
  });

  test("routing policies: read, edit, delete and call", async () => {
    const slug = `iso-${crypto.randomUUID().slice(0, 8)}`;
    const p = await g.call("POST", "/v1/routing-policies", {
      token: alice.jwt,
      body: { slug, display_name: "Alice's", policy_type: "fallback", entries: [{ model: "gpt-4o-mini" }] },
    });
    expect(p.status).toBe(201);
    await sameAsMissing("GET", (id) => `/v1/routing-policies/${id}`, p.body.id, mallory.jwt);
    await sameAsMissing("PATCH", (id) => `/v1/routing-policies/${id}`, p.body.id, mallory.jwt, {
      display_name: "pwned",
    });
    await sameAsMissing("DELETE", (id) => `/v1/routing-policies/${id}`, p.body.id, mallory.jwt);
    expect(JSON.stringify((await g.call("GET", "/v1/routing-policies", { token: mallory.jwt })).body)).not.toContain(
      p.body.id,
    );
    // Calling it by slug from another account is the same as calling a slug that does not exist.
    const call = async (s: string) =>
      g.call("POST", "/v1/chat/completions", {
        token: malloryKey.key,
        body: { model: `orch/${s}`, messages: [{ role: "user", content: "hi" }], max_tokens: 5 },
      });
    const theirs = await call(slug);
    const none = await call(`nope-${crypto.randomUUID().slice(0, 8)}`);
    expect(theirs.status).toBe(none.status);
    expect(theirs.body.detail.error).toBe(none.body.detail.error);
    expect((await g.call("GET", `/v1/routing-policies/${p.body.id}`, { token: alice.jwt })).body.display_name).toBe(
      "Alice's",
    );
    // The slug is per account: Mallory may take the same one.
    expect(
      (
        await g.call("POST", "/v1/routing-policies", {
          token: mallory.jwt,
          body: { slug, display_name: "m", policy_type: "fallback", entries: [{ model: "gpt-4o-mini" }] },
        })
      ).status,
    ).toBe(201);
  });

  test("video jobs and their content: another key (even of the same account) gets 404", async () => {
    const job = await g.call("POST", "/v1/video/generations", {
      token: aliceKey.key,
      body: { model: "veo-3", prompt: "a kite", duration_seconds: 8 },
    });
    expect(job.status).toBe(202);
    for (const token of [malloryKey.key, aliceKey2.key]) {
      await sameAsMissing("GET", (id) => `/v1/jobs/${id}`, job.body.job_id, token);
      await sameAsMissing("GET", (id) => `/v1/jobs/${id}/content`, job.body.job_id, token);
      await sameAsMissing("POST", (id) => `/v1/jobs/${id}/cancel`, job.body.job_id, token);
    }
    expect((await g.call("GET", `/v1/jobs/${job.body.job_id}`, { token: aliceKey.key })).body.status).toBe(
      "processing",
    );
  });

  test("usage report and feedback", async () => {
    const r = await g.call("POST", "/v1/chat/completions", {
      token: aliceKey.key,
      body: { model: "gpt-4o-mini", messages: [{ role: "user", content: "hi" }], max_tokens: 5 },
    });
    expect(r.status).toBe(200);
    const rid = r.headers.get("x-request-id")!;
    await g.call("POST", "/v1/chat/completions", {
      token: malloryKey.key,
      body: { model: "claude-haiku-4-5", messages: [{ role: "user", content: "hi" }], max_tokens: 5 },
    });
    // Feedback on someone else's request is the same 404 as on a request that never was.
    await sameAsMissing("POST", (id) => `/v1/responses/${id}/feedback`, rid, mallory.jwt, { rating: "down" });
    expect(
      (await g.call("POST", `/v1/responses/${rid}/feedback`, { token: alice.jwt, body: { rating: "up" } })).status,
    ).toBe(201);
    // Each usage report holds its own account's calls only (read with a key allowed to: usage:read).
    const malloryReader = await g.newKey(mallory, { name: "mallory-report", scopes: ["usage:read"] });
    let report: any;
    for (let i = 0; i < 100; i++) {
      report = (await g.call("GET", "/v1/usage/report", { token: malloryReader.key })).body;
      if (report.data?.length) break;
      await Bun.sleep(100);
    }
    expect(report.data.map((d: any) => d.model)).toEqual(["claude-haiku-4-5"]);
  });

  test("activity, generations, policy decisions and the dashboard's video jobs", async () => {
    const reader = await g.newKey(alice, { name: "alice-reader", scopes: ["chat", "usage:read"] });
    const spy = await g.newKey(mallory, { name: "mallory-reader", scopes: ["chat", "usage:read"] });
    const slug = `iso-d-${crypto.randomUUID().slice(0, 8)}`;
    const p = (
      await g.call("POST", "/v1/routing-policies", {
        token: alice.jwt,
        body: { slug, display_name: "d", policy_type: "fallback", entries: [{ model: "gpt-4o-mini" }] },
      })
    ).body;
    const r = await g.call("POST", "/v1/chat/completions", {
      token: reader.key,
      body: { model: `orch/${slug}`, messages: [{ role: "user", content: "hi" }], max_tokens: 5 },
    });
    expect(r.status).toBe(200);
    const rid = r.headers.get("x-request-id")!;
    const job = (
      await g.call("POST", "/v1/video/generations", { token: aliceKey.key, body: { prompt: "alice's boat" } })
    ).body;
    await g.gw.settlements.quiesce();
    for (const token of [mallory.jwt, spy.key]) await sameAsMissing("GET", (id) => `/v1/generations/${id}`, rid, token);
    await sameAsMissing("GET", (id) => `/v1/routing-policies/${id}/decisions`, p.id, mallory.jwt);
    await sameAsMissing("POST", (id) => `/v1/video/jobs/${id}/cancel`, job.job_id, mallory.jwt);
    await sameAsMissing("GET", (id) => `/v1/video/jobs/${id}/content`, job.job_id, mallory.jwt);
    for (const [path, token] of [
      ["/v1/activity", mallory.jwt],
      ["/v1/activity", spy.key],
      ["/v1/activity/summary", mallory.jwt],
      ["/v1/video/jobs", mallory.jwt],
    ] as const) {
      const list = await g.call("GET", path, { token });
      expect(list.status).toBe(200);
      expect(JSON.stringify(list.body)).not.toContain(rid);
      expect(JSON.stringify(list.body)).not.toContain(job.job_id);
      expect(JSON.stringify(list.body)).not.toContain("gpt-4o-mini@");
    }
    // Alice's own views have them; her job is still running.
    expect(JSON.stringify((await g.call("GET", "/v1/activity", { token: alice.jwt })).body)).toContain(rid);
    expect(
      (await g.call("GET", "/v1/video/jobs", { token: alice.jwt })).body.data.find((j: any) => j.job_id === job.job_id)
        .status,
    ).toBe("processing");
  });

  test("admin endpoints refuse dashboard tokens and API keys", async () => {
    for (const token of [alice.jwt, aliceKey.key]) {
      expect(
        (await g.call("POST", `/v1/admin/users/${mallory.id}/topups`, { token, body: { amount_krw: 1000 } })).status,
      ).toBe(401);
      expect((await g.call("PATCH", `/v1/admin/users/${mallory.id}`, { token, body: { deleted: true } })).status).toBe(
        401,
      );
    }
  });
});
