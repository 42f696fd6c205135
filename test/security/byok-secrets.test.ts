/**
 * BYOK provider credentials at rest: sealed with AES-256-GCM under BYOK_ENCRYPTION_KEY, a key
 * kept outside the database (generated into DATA_DIR in demo mode), and opened only to call
 * the upstream. Rows stored in clear before are sealed at start; a key that cannot open the
 * stored credentials stops the start; without a key no BYOK key can be created.
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ADMIN_TOKEN, dbKinds, startTestGateway, TEST_BYOK_KEY, type TestGateway } from "../harness";
import { chat, chatFetch, errorCode, fastUser, proxiedGateway, user, type RecordingProxy } from "../support/chat";
import { gatewayOn } from "../support/http";
import { ConfigError, loadConfig } from "../../src/config";
import { openDatabase, type Database } from "../../src/db/client";
import { buildGateway } from "../../src/gateway";
import { log } from "../../src/lib/log";
import { byokContext, SecretBox } from "../../src/lib/secret-box";
import { captureLog } from "../support/capture-log";

setDefaultTimeout(60_000);

const OTHER_KEY = Buffer.alloc(32, 7).toString("base64");

/** Tables any of whose rows contains `needle` in its text form. */
async function tablesContaining(db: Database, needle: string): Promise<string[]> {
  const tables = await db.query<{ t: string }>(
    "select table_name as t from information_schema.tables where table_schema = 'public' and table_type = 'BASE TABLE'",
  );
  const hits: string[] = [];
  for (const { t } of tables) {
    const rows = await db.query<{ r: string }>(`select t::text as r from "${t}" t`);
    if (rows.some((x) => x.r.includes(needle))) hits.push(t);
  }
  return hits;
}

const storedSecret = async (db: Database, id: string) =>
  (await db.query<{ s: string }>("select byok_secret as s from api_keys where id = $1", [id]))[0]!.s;

describe("BYOK_ENCRYPTION_KEY", () => {
  test("32 bytes as 64 hex digits or base64; anything else stops the start naming it", () => {
    expect(loadConfig({ BYOK_ENCRYPTION_KEY: TEST_BYOK_KEY }).BYOK_ENCRYPTION_KEY).toBe(TEST_BYOK_KEY);
    expect(loadConfig({ BYOK_ENCRYPTION_KEY: OTHER_KEY }).BYOK_ENCRYPTION_KEY).toBe(OTHER_KEY);
    expect(
      loadConfig({ BYOK_ENCRYPTION_KEY: Buffer.alloc(32, 9).toString("base64url") }).BYOK_ENCRYPTION_KEY,
    ).toBeDefined();
    for (const bad of [
      "short",
      "0".repeat(62),
      "0".repeat(66),
      Buffer.alloc(31).toString("base64"),
      Buffer.alloc(33).toString("base64"),
      "g".repeat(64),
    ]) {
      expect(() => loadConfig({ BYOK_ENCRYPTION_KEY: bad })).toThrow(ConfigError);
      expect(() => loadConfig({ BYOK_ENCRYPTION_KEY: bad })).toThrow(/BYOK_ENCRYPTION_KEY/);
    }
    // The refusal does not repeat the value (it goes to the logs): a near miss is most of the key.
    const nearMiss = TEST_BYOK_KEY.slice(0, 63);
    expect(() => loadConfig({ BYOK_ENCRYPTION_KEY: nearMiss })).toThrow(/value hidden/);
    try {
      loadConfig({ BYOK_ENCRYPTION_KEY: nearMiss, JWT_SECRET: "short-jwt-secret", ADMIN_TOKEN: "short" });
    } catch (e) {
      expect(String(e)).not.toContain(nearMiss);
      expect(String(e)).not.toContain("short-jwt-secret");
    }
  });
});

for (const kind of await dbKinds()) {
  describe(`BYOK credentials at rest on ${kind}`, () => {
    let g: TestGateway;
    let proxy: RecordingProxy;
    beforeAll(async () => {
      ({ g, proxy } = await proxiedGateway(["openai"], { VIDEO_POLL_WORKERS: "0" }, kind));
    }, 60_000);
    afterAll(async () => {
      await g?.stop();
      proxy?.stop();
    });
    const byok = (userId: string, secret: string) =>
      g.admin("POST", `/v1/admin/users/${userId}/byok-keys`, { provider: "openai", provider_api_key: secret });
    const db = () => g.gw.deps.db;

    test("stored sealed (versioned), never in clear anywhere; the upstream still receives the user's credential", async () => {
      const u = await fastUser(g);
      const secret = `sk-own-${crypto.randomUUID()}`;
      const bodies: string[] = [];
      let id = "";
      const logs = await captureLog(async () => {
        const b = await byok(u.id, secret);
        expect(b.status).toBe(201);
        id = b.body.id;
        bodies.push(JSON.stringify(b.body));
        proxy.clear();
        const r = await chat(g, b.body.key, { model: "gpt-4o-mini", messages: user("sealed credential") });
        expect(r.status).toBe(200);
        const s = await chatFetch(g, b.body.key, {
          model: "gpt-4o-mini",
          messages: user("sealed, streamed"),
          stream: true,
        });
        expect(s.status).toBe(200);
        await s.text();
        // A call the upstream rejects, and a bad body: neither answer nor log may carry it.
        bodies.push(
          JSON.stringify(
            (await chat(g, b.body.key, { model: "gpt-4o-mini", messages: user("no [sim:fail=401]") })).body,
          ),
        );
        bodies.push(
          JSON.stringify(
            (await chat(g, b.body.key, { model: "gpt-4o-mini", messages: user("x"), temperature: 9 })).body,
          ),
        );
        const refused = await g.admin("POST", `/v1/admin/users/${u.id}/byok-keys`, {
          provider: "openai",
          provider_api_key: secret + "x".repeat(1000),
        });
        expect(refused.status).toBe(422);
        bodies.push(JSON.stringify(refused.body));
        bodies.push(JSON.stringify((await g.call("GET", "/v1/keys", { token: u.jwt })).body));
        bodies.push(JSON.stringify((await g.call("GET", "/v1/me", { token: b.body.key })).body));
        await Bun.sleep(200);
        log.debug("capture check");
      });
      expect(proxy.bodies.slice(0, 2).map((c) => c.authorization)).toEqual([`Bearer ${secret}`, `Bearer ${secret}`]);
      expect(logs).toContain("capture check");
      expect(logs.includes(secret)).toBe(false);
      for (const b of bodies) expect(b.includes(secret)).toBe(false);
      const stored = await storedSecret(db(), id);
      expect(stored).toStartWith("gwenc:v1:");
      expect(await tablesContaining(db(), secret)).toEqual([]);
      // Not a deterministic encryption: the same credential sealed twice looks different.
      const again = await byok(u.id, secret);
      expect(await storedSecret(db(), again.body.id)).not.toBe(stored);
    });

    test("a credential sealed under another key: 503 byok_encryption_unavailable, the upstream is never called", async () => {
      const u = await fastUser(g);
      const b = await byok(u.id, "sk-sealed-elsewhere");
      // As if another instance with another key had written the row (this key is not cached yet).
      const foreign = SecretBox.fromText(OTHER_KEY).seal("sk-sealed-elsewhere", byokContext(b.body.id));
      await db().query("update api_keys set byok_secret = $2 where id = $1", [b.body.id, foreign]);
      proxy.clear();
      const r = await chat(g, b.body.key, { model: "gpt-4o-mini", messages: user("cannot open") });
      expect(r.status).toBe(503);
      expect(errorCode(r.body)).toBe("byok_encryption_unavailable");
      expect(proxy.bodies).toEqual([]);
      // A sealed value moved to another row does not open there either (bound to its key id).
      const other = await byok(u.id, "sk-other-row");
      await db().query(
        "update api_keys set byok_secret = (select byok_secret from api_keys where id = $2) where id = $1",
        [b.body.id, other.body.id],
      );
      await g.gw.deps.bus.publish({ t: "key", id: b.body.id });
      expect((await chat(g, b.body.key, { model: "gpt-4o-mini", messages: user("swapped") })).status).toBe(503);
      expect(proxy.bodies).toEqual([]);
      await db().query("delete from api_keys where id = $1", [b.body.id]); // the later starts must be able to open every row
    });

    test("rows stored in clear before are sealed at start, once; their calls still carry the credential", async () => {
      const u = await fastUser(g);
      const b = await byok(u.id, "placeholder");
      const legacy = `sk-legacy-${crypto.randomUUID()}`;
      await db().query("update api_keys set byok_secret = $2 where id = $1", [b.body.id, legacy]);
      const env = { OPENAI_BASE_URL: `${proxy.url}/openai`, VIDEO_POLL_WORKERS: "0", STATS_ROLLUP_INTERVAL_MS: "0" };
      const g2 = await gatewayOn(db(), kind, env);
      try {
        const sealed = await storedSecret(db(), b.body.id);
        expect(sealed).toStartWith("gwenc:v1:");
        expect(await tablesContaining(db(), legacy)).toEqual([]);
        proxy.clear();
        expect((await chat(g2, b.body.key, { model: "gpt-4o-mini", messages: user("legacy row") })).status).toBe(200);
        expect(proxy.bodies.map((c) => c.authorization)).toEqual([`Bearer ${legacy}`]);
        // Another start seals nothing again.
        const g3 = await gatewayOn(db(), kind, env);
        await g3.stop();
        expect(await storedSecret(db(), b.body.id)).toBe(sealed);
      } finally {
        await g2.stop();
      }
    });

    test("a wrong or missing key stops the start, naming BYOK_ENCRYPTION_KEY", async () => {
      const env = { VIDEO_POLL_WORKERS: "0", STATS_ROLLUP_INTERVAL_MS: "0" };
      await expect(gatewayOn(db(), kind, { ...env, BYOK_ENCRYPTION_KEY: OTHER_KEY })).rejects.toThrow(
        /BYOK_ENCRYPTION_KEY/,
      );
      await expect(gatewayOn(db(), kind, { ...env, BYOK_ENCRYPTION_KEY: "" })).rejects.toThrow(/BYOK_ENCRYPTION_KEY/);
      // The running gateway is untouched.
      expect((await g.call("GET", "/readyz")).status).toBe(200);
    });
  });
}

describe("without BYOK_ENCRYPTION_KEY (production mode)", () => {
  let g: TestGateway;
  beforeAll(async () => {
    g = await startTestGateway({ env: { BYOK_ENCRYPTION_KEY: "", VIDEO_POLL_WORKERS: "0" } });
  }, 60_000);
  afterAll(async () => {
    await g?.stop();
  });

  test("creating a BYOK key is refused with 503 byok_encryption_unavailable; nothing is stored; other keys work", async () => {
    const u = await fastUser(g);
    const r = await g.admin("POST", `/v1/admin/users/${u.id}/byok-keys`, {
      provider: "openai",
      provider_api_key: "sk-would-be-clear",
    });
    expect(r.status).toBe(503);
    expect(errorCode(r.body)).toBe("byok_encryption_unavailable");
    expect(r.body.detail.message).toContain("BYOK_ENCRYPTION_KEY");
    expect(await tablesContaining(g.gw.deps.db, "sk-would-be-clear")).toEqual([]);
    expect((await g.admin("POST", `/v1/admin/users/${u.id}/delegated-keys`, {})).status).toBe(201);
  });
});

describe("demo mode", () => {
  test("generates the key once into DATA_DIR (0600) and reads it back on the next start", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "gw-byok-demo-"));
    const otherDir = mkdtempSync(join(tmpdir(), "gw-byok-demo-"));
    const db = await openDatabase({});
    const cfg = (dir: string) =>
      loadConfig({
        DATA_DIR: dir,
        DEMO_MODE: "true",
        ADMIN_TOKEN,
        LOG_LEVEL: "silent",
        RATE_LIMIT_RPM: "0",
        VIDEO_POLL_WORKERS: "0",
        STATS_ROLLUP_INTERVAL_MS: "0",
      });
    const start = async (dir: string) => {
      const gw = await buildGateway(cfg(dir), { db });
      gw.app.listen({ port: 0, hostname: "127.0.0.1" });
      return { gw, url: `http://127.0.0.1:${gw.app.server!.port}` };
    };
    try {
      let { gw, url } = await start(dataDir);
      const file = join(dataDir, "byok-encryption-key");
      expect(statSync(file).mode & 0o777).toBe(0o600);
      expect(Buffer.from(readFileSync(file, "utf8").trim(), "base64").length).toBe(32);
      const u = await gw.deps.users.create({
        email: `demo-${crypto.randomUUID()}@test.example`,
        passwordHash: "x",
        industry: "general",
        regulated: false,
      });
      const made = await fetch(`${url}/v1/admin/users/${u!.id}/byok-keys`, {
        method: "POST",
        headers: { authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "application/json" },
        body: JSON.stringify({ provider: "openai", provider_api_key: "sk-demo-own" }),
      });
      expect(made.status).toBe(201);
      const key = ((await made.json()) as { key: string }).key;
      await gw.app.stop(true);
      await gw.stop();

      ({ gw, url } = await start(dataDir));
      const r = await fetch(`${url}/v1/chat/completions`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body: JSON.stringify({ model: "gpt-4o-mini", messages: user("demo restart") }),
      });
      expect(r.status).toBe(200);
      await gw.app.stop(true);
      await gw.stop();
      // Another DATA_DIR means another generated key: it cannot open the stored credential.
      await expect(buildGateway(cfg(otherDir), { db })).rejects.toThrow(/BYOK_ENCRYPTION_KEY/);
    } finally {
      await db.close();
      rmSync(dataDir, { recursive: true, force: true });
      rmSync(otherDir, { recursive: true, force: true });
    }
  });
});
