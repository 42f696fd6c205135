/**
 * The operator's view of a real gateway process (`bun src/main.ts` on a fresh PostgreSQL
 * database, PGlite when none is reachable): after a full run (sign-up, login, key creation,
 * chat answered / streamed / 401 / 422 / 429 / upstream 502, admin calls) every stdout line is
 * JSON, every request has exactly one line with its fields, and no log line on stdout or
 * stderr carries a key secret, a JWT, the admin token, a password or a provider key.
 * Demo mode: its banner (admin token, demo password, demo key, shown once by design) is plain
 * text on stderr and the only place those appear.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import type { Subprocess } from "bun";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { ADMIN_TOKEN, freshPostgres, postgresAvailable, UNLIMITED_ENV } from "../harness";
import { freePort, SimProcess } from "../support/procs";

setDefaultTimeout(120_000);

const ROOT = resolve(import.meta.dir, "../..");
const PROVIDER_SECRET = "sk-test-secret-4f9b2c7e1a0d3b8c6e5f";
const JWT_SECRET = "process-logs-jwt-secret-0123456789abcdef";

/** A gateway process whose stdout and stderr are kept apart. */
class LoggedProcess {
  readonly port = freePort();
  readonly url = `http://127.0.0.1:${this.port}`;
  readonly dataDir = mkdtempSync(join(tmpdir(), "gw-logs-"));
  private proc: Subprocess<"ignore", "pipe", "pipe"> | null = null;
  stdout = "";
  stderr = "";
  private reading: Promise<unknown> = Promise.resolve();

  async start(env: Record<string, string>): Promise<void> {
    this.proc = Bun.spawn([process.execPath, "src/main.ts"], {
      cwd: ROOT,
      env: { ...process.env, PORT: String(this.port), HOST: "127.0.0.1", DATA_DIR: this.dataDir, ...env },
      stdin: "ignore",
      stdout: "pipe",
      stderr: "pipe",
    });
    const drain = async (stream: ReadableStream<Uint8Array>, to: "stdout" | "stderr") => {
      const dec = new TextDecoder();
      for await (const chunk of stream) this[to] += dec.decode(chunk, { stream: true });
    };
    this.reading = Promise.all([drain(this.proc.stdout, "stdout"), drain(this.proc.stderr, "stderr")]);
    const until = performance.now() + 60_000;
    for (;;) {
      const ok = await fetch(`${this.url}/readyz`).then(
        (r) => r.ok,
        () => false,
      );
      if (ok) return;
      if (this.proc.exitCode !== null) throw new Error(`gateway exited: ${this.stderr}`);
      if (performance.now() > until) throw new Error("gateway not ready");
      await Bun.sleep(100);
    }
  }

  /** SIGTERM, then everything it wrote. */
  async stop(): Promise<{ stdout: string; stderr: string }> {
    this.proc?.kill("SIGTERM");
    await this.proc?.exited;
    await this.reading;
    return { stdout: this.stdout, stderr: this.stderr };
  }

  cleanup(): void {
    rmSync(this.dataDir, { recursive: true, force: true });
  }
}

async function call(base: string, method: string, path: string, o: { token?: string; body?: unknown } = {}) {
  const headers: Record<string, string> = {};
  if (o.token) headers.authorization = `Bearer ${o.token}`;
  if (o.body !== undefined) headers["content-type"] = "application/json";
  const r = await fetch(base + path, {
    method,
    headers,
    body: o.body === undefined ? undefined : JSON.stringify(o.body),
  });
  const text = await r.text();
  let body: any = text;
  try {
    body = JSON.parse(text);
  } catch {}
  return { status: r.status, body, id: r.headers.get("x-request-id")!, text };
}

const jsonLines = (s: string) => s.split("\n").filter((l) => l.trim() !== "");

describe("a gateway process, not in demo mode", () => {
  const sim = new SimProcess();
  const gw = new LoggedProcess();
  let dropDb = async () => {};
  let stdout = "";
  let stderr = "";
  /** What each request was, by its id (x-request-id). */
  const sent = new Map<string, { route: string; status: number; method: string }>();
  const secrets: string[] = [ADMIN_TOKEN, PROVIDER_SECRET, JWT_SECRET];
  const note = (r: { id: string; status: number }, method: string, route: string) =>
    sent.set(r.id, { method, route, status: r.status });

  beforeAll(async () => {
    await sim.start();
    let db: Record<string, string> = {};
    if (await postgresAvailable()) {
      const fresh = await freshPostgres();
      dropDb = fresh.drop;
      db = { DATABASE_URL: fresh.url };
    }
    await gw.start({
      ...db,
      ...sim.providerEnv(),
      // The provider key under test: a real-looking secret, pointed at the simulator.
      OPENAI_API_KEY: PROVIDER_SECRET,
      OPENAI_BASE_URL: `${sim.url}/sim/openai`,
      SIMULATOR: "on",
      DEMO_MODE: "false",
      ADMIN_TOKEN,
      JWT_SECRET,
      LOG_LEVEL: "debug",
      RETRY_BASE_MS: "5",
      RATE_LIMIT_RPM: "0",
      ...UNLIMITED_ENV,
    });
    const u = gw.url;
    const email = `logs${crypto.randomUUID().slice(0, 8)}@test.example`;
    const password = "correct horse battery staple";
    secrets.push(password);
    const s = await call(u, "POST", "/v1/auth/signup", { body: { email, password } });
    note(s, "POST", "/v1/auth/signup");
    const l = await call(u, "POST", "/v1/auth/login", { body: { email, password } });
    note(l, "POST", "/v1/auth/login");
    const jwt: string = l.body.access_token;
    secrets.push(jwt);
    const top = await call(u, "POST", `/v1/admin/users/${s.body.user_id}/topups`, {
      token: ADMIN_TOKEN,
      body: { amount_krw: 10_000 },
    });
    note(top, "POST", "/v1/admin/users/:user_id/topups");
    const k = await call(u, "POST", "/v1/keys", { token: jwt, body: { name: "logs" } });
    note(k, "POST", "/v1/keys");
    const key: string = k.body.key;
    secrets.push(key);
    const chat = (content: string, extra: Record<string, unknown> = {}, token = key) =>
      call(u, "POST", "/v1/chat/completions", {
        token,
        body: { model: "gpt-4o-mini", messages: [{ role: "user", content }], ...extra },
      });
    note(await chat("hello"), "POST", "/v1/chat/completions");
    note(await chat("stream please", { stream: true }), "POST", "/v1/chat/completions");
    note(await chat("bad key", {}, "sk-gw-not-a-real-key-000000000000"), "POST", "/v1/chat/completions");
    note(await chat("bad temperature", { temperature: 7 }), "POST", "/v1/chat/completions");
    note(await chat("busy [sim:fail=429]"), "POST", "/v1/chat/completions");
    note(await chat("down [sim:fail=502]"), "POST", "/v1/chat/completions");
    note(
      await call(u, "PATCH", `/v1/admin/users/${s.body.user_id}`, {
        token: ADMIN_TOKEN,
        body: { xborder_training_consent: true },
      }),
      "PATCH",
      "/v1/admin/users/:user_id",
    );
    note(await call(u, "GET", "/v1/admin/settings", { token: ADMIN_TOKEN }), "GET", "/v1/admin/settings");
    note(
      await call(u, "PATCH", `/v1/keys/${k.body.id}`, { token: jwt, body: { name: "renamed" } }),
      "PATCH",
      "/v1/keys/:id",
    );
    note(await call(u, "GET", "/v1/models"), "GET", "/v1/models");
    ({ stdout, stderr } = await gw.stop());
  });

  afterAll(async () => {
    await gw.stop().catch(() => {});
    await sim.stop();
    await dropDb();
    gw.cleanup();
  });

  test("the run got the statuses it was meant to", () => {
    expect([...sent.values()].map((s) => s.status)).toEqual([
      201, 200, 201, 201, 200, 200, 401, 422, 429, 502, 200, 200, 200, 200,
    ]);
  });

  test("every stdout line is one JSON object", () => {
    const lines = jsonLines(stdout);
    expect(lines.length).toBeGreaterThan(sent.size);
    for (const l of lines) expect(typeof JSON.parse(l)).toBe("object");
  });

  test("one request line per request, with its fields", () => {
    const byId = new Map<string, any[]>();
    for (const l of jsonLines(stdout)) {
      const j = JSON.parse(l);
      if (j.msg === "request") byId.set(j.request_id, [...(byId.get(j.request_id) ?? []), j]);
    }
    for (const [id, want] of sent) {
      const lines = byId.get(id) ?? [];
      expect([id, lines.length]).toEqual([id, 1]);
      const line = lines[0];
      expect(line).toMatchObject({ method: want.method, route: want.route, status: want.status });
      expect(typeof line.ts).toBe("string");
      expect(typeof line.duration_ms).toBe("number");
    }
    const chats = [...sent].filter(([, s]) => s.route === "/v1/chat/completions").map(([id]) => byId.get(id)![0]);
    const [ok, stream, unauth, invalid, limited, down] = chats;
    expect(ok).toMatchObject({
      model: "gpt-4o-mini",
      provider: "openai",
      cache_hit: false,
      attempts: [{ provider: "openai", model: "gpt-4o-mini", outcome: "ok" }],
    });
    expect(ok.key_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(ok.account_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(ok.tokens.in).toBeGreaterThan(0);
    expect(ok.cost_krw).toBeGreaterThan(0);
    expect(stream).toMatchObject({ stream: "complete", provider: "openai" });
    expect(stream.ttfb_ms).toBeGreaterThanOrEqual(0);
    expect(stream.tokens.out).toBeGreaterThan(0);
    expect(unauth).toMatchObject({ error: "unauthorized" });
    expect(unauth.key_id).toBeUndefined();
    expect(invalid).toMatchObject({ error: "validation_error" });
    expect(limited).toMatchObject({
      error: "upstream_rate_limited",
      attempts: [{ provider: "openai", outcome: "failed", status: 429 }],
    });
    expect(down.error).toBe("upstream_unavailable");
    expect(down.attempts.map((a: any) => [a.outcome, a.status])).toEqual([
      ["retry", 502],
      ["retry", 502],
      ["failed", 502],
    ]);
  });

  test("no secret in any log line, stdout or stderr", () => {
    const all = stdout + "\n" + stderr;
    for (const s of secrets) expect([s.slice(0, 12), all.includes(s)]).toEqual([s.slice(0, 12), false]);
    expect(all).not.toMatch(/eyJ[A-Za-z0-9_-]+\.eyJ/); // no JWT at all
    expect(all).not.toMatch(/sk-gw-[A-Za-z0-9]{20,}/); // no API key secret at all
  });
});

describe("demo mode", () => {
  const gw = new LoggedProcess();
  let stdout = "";
  let stderr = "";
  let banner = { adminToken: "", password: "", key: "" };

  beforeAll(async () => {
    const env: Record<string, string> = { DEMO_MODE: "true", SIMULATOR: "on", LOG_LEVEL: "debug", ...UNLIMITED_ENV };
    for (const k of Object.keys(process.env))
      if (/_(API_KEY|BASE_URL)$/.test(k) || k === "DATABASE_URL" || k === "ADMIN_TOKEN") env[k] = "";
    await gw.start(env);
    const until = performance.now() + 30_000;
    while (!/Demo API key/.test(gw.stderr) && performance.now() < until) await Bun.sleep(50);
    await Bun.sleep(100);
    banner = {
      adminToken: /Admin token: (\S+)/.exec(gw.stderr)?.[1] ?? "",
      password: /Demo account: \S+ \/ (\S+)/.exec(gw.stderr)?.[1] ?? "",
      key: /Demo API key \(shown once\): (\S+)/.exec(gw.stderr)?.[1] ?? "",
    };
  });

  afterAll(async () => {
    await gw.stop().catch(() => {});
    gw.cleanup();
  });

  test("stdout is JSON lines only; the banner is on stderr and the only place its secrets appear", async () => {
    expect(banner.adminToken.length).toBeGreaterThan(15);
    expect(banner.key).toStartWith("sk-gw-");
    // The demo's secrets in use: a chat call with the demo key, an admin call, a login.
    const c = await call(gw.url, "POST", "/v1/chat/completions", {
      token: banner.key,
      body: { model: "gpt-4o-mini", messages: [{ role: "user", content: "hi" }] },
    });
    expect(c.status).toBe(200);
    expect((await call(gw.url, "GET", "/v1/admin/settings", { token: banner.adminToken })).status).toBe(200);
    expect(
      (
        await call(gw.url, "POST", "/v1/auth/login", {
          body: { email: "demo@gateway.local", password: banner.password },
        })
      ).status,
    ).toBe(200);
    ({ stdout, stderr } = await gw.stop());
    const lines = jsonLines(stdout);
    for (const l of lines) expect(typeof JSON.parse(l)).toBe("object");
    expect(lines.some((l) => JSON.parse(l).msg === "request" && JSON.parse(l).request_id === c.id)).toBe(true);
    for (const s of [banner.adminToken, banner.password, banner.key]) {
      expect(stdout.includes(s)).toBe(false);
      // On stderr only inside the banner's own lines.
      const outside = stderr
        .split("\n")
        .filter(
          (l) => l.includes(s) && !/^ {2}(Admin token: |Demo account: |Demo API key \(shown once\): |curl )/.test(l),
        );
      expect(outside).toEqual([]);
    }
  });
});
