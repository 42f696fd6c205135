import { describe, expect, test } from "bun:test";
import { ConfigError, loadConfig } from "../../src/config";
import { runtimeConfig } from "../../src/jobs/video-runtime";

function problems(env: Record<string, string>): string[] {
  try {
    loadConfig(env);
  } catch (e) {
    if (e instanceof ConfigError) return e.problems;
    throw e;
  }
  return [];
}

describe("loadConfig", () => {
  test("defaults with an empty environment (demo mode)", () => {
    const c = loadConfig({});
    expect(c).toMatchObject({
      PORT: 8080,
      HOST: "0.0.0.0",
      DATA_DIR: "./data",
      RATE_LIMIT_RPM: 60,
      MAX_BODY_BYTES: 50 * 1024 * 1024,
      JWT_TTL_SECONDS: 3600,
      TRUSTED_PROXIES: "",
      demoMode: true,
    });
    expect(c.FX_USD_KRW).toBeGreaterThan(0);
    expect(c.DATABASE_URL).toBeUndefined();
    expect(c.ADMIN_TOKEN).toBeUndefined();
    expect(c.REDIS_URL).toBeUndefined();
    expect(c.providerKeys).toEqual({});
    expect(c.providerBaseUrls).toEqual({});
    expect(Object.isFrozen(c)).toBe(true);
  });

  test("the upstream budget follows Bun's fetch limit; the per-account and per-key limits follow the budget", () => {
    // The gateway applies BUN_CONFIG_MAX_HTTP_REQUESTS=4096 to itself when unset (src/boot/fetch-limit.ts).
    expect(loadConfig({})).toMatchObject({
      BUN_CONFIG_MAX_HTTP_REQUESTS: 4096,
      UPSTREAM_MAX_CONCURRENT: 3072,
      CONCURRENCY_PER_ACCOUNT: 768,
      CONCURRENCY_PER_KEY: 384,
      UPSTREAM_QUEUE_TIMEOUT_MS: 10_000,
    });
    expect(loadConfig({ BUN_CONFIG_MAX_HTTP_REQUESTS: "256" })).toMatchObject({
      UPSTREAM_MAX_CONCURRENT: 192,
      CONCURRENCY_PER_ACCOUNT: 48,
      CONCURRENCY_PER_KEY: 24,
    });
    expect(loadConfig({ UPSTREAM_MAX_CONCURRENT: "40" })).toMatchObject({
      UPSTREAM_MAX_CONCURRENT: 40,
      CONCURRENCY_PER_ACCOUNT: 10,
      CONCURRENCY_PER_KEY: 5,
    });
    expect(
      loadConfig({ UPSTREAM_MAX_CONCURRENT: "0", CONCURRENCY_PER_ACCOUNT: "0", CONCURRENCY_PER_KEY: "7" }),
    ).toMatchObject({ UPSTREAM_MAX_CONCURRENT: 0, CONCURRENCY_PER_ACCOUNT: 0, CONCURRENCY_PER_KEY: 7 });
    // A budget Bun would cut silently (it queues past its own limit) does not start.
    expect(problems({ UPSTREAM_MAX_CONCURRENT: "500", BUN_CONFIG_MAX_HTTP_REQUESTS: "256" })).toEqual([
      expect.stringMatching(
        /^UPSTREAM_MAX_CONCURRENT: 500 is more than 3\/4 of Bun's fetch limit \(BUN_CONFIG_MAX_HTTP_REQUESTS=256\); raise BUN_CONFIG_MAX_HTTP_REQUESTS to at least 667/,
      ),
    ]);
    expect(problems({ UPSTREAM_MAX_CONCURRENT: "500", BUN_CONFIG_MAX_HTTP_REQUESTS: "1024" })).toEqual([]);
    expect(problems({ BUN_CONFIG_MAX_HTTP_REQUESTS: "70000" })[0]).toStartWith("BUN_CONFIG_MAX_HTTP_REQUESTS:");
  });

  test("every boolean accepts true/false, on/off, 1/0 in any case; anything else names the valid spellings", () => {
    for (const [text, value] of [
      ["true", true],
      ["ON", true],
      ["1", true],
      ["On", true],
      ["false", false],
      ["off", false],
      ["OFF", false],
      ["0", false],
      [" False ", false],
    ] as const) {
      const c = loadConfig({ DEMO_MODE: text, LEDGER_LEASES: text, VIDEO_URL_PRIVATE_HOSTS_ALLOWED: text });
      expect([text, c.demoMode, c.LEDGER_LEASES, c.VIDEO_URL_PRIVATE_HOSTS_ALLOWED]).toEqual([
        text,
        value,
        value,
        value,
      ]);
    }
    expect(loadConfig({})).toMatchObject({
      LEDGER_LEASES: true,
      VIDEO_URL_PRIVATE_HOSTS_ALLOWED: false,
      demoMode: true,
    });
    const p = problems({ DEMO_MODE: "yes", LEDGER_LEASES: "enabled" });
    expect(p).toEqual([
      'DEMO_MODE: expected one of true, false, on, off, 1, 0 (any case), got "yes"',
      'LEDGER_LEASES: expected one of true, false, on, off, 1, 0 (any case), got "enabled"',
    ]);
  });

  test("a malformed DATABASE_URL is one sentence that does not repeat the URL (it holds a password)", () => {
    expect(problems({ DATABASE_URL: "postgres://u:secret@host:port/db" })).toEqual([
      "DATABASE_URL: not a valid URL (expected postgres://user:password@host:5432/database)",
    ]);
    expect(problems({ DATABASE_URL: "postgres:///db" })).toEqual([
      "DATABASE_URL: the URL names no host (expected postgres://user:password@host:5432/database)",
    ]);
    expect(problems({ DATABASE_URL: "postgres:///db?host=/var/run/postgresql" })).toEqual([]);
    expect(loadConfig({ DATABASE_URL: "postgres://u@h/db" }).DB_CONNECT_TIMEOUT_SECONDS).toBe(60);
  });

  test("authentication throttles: production defaults, 0 turns one off", () => {
    expect(loadConfig({})).toMatchObject({
      SIGNUP_RATE_PER_IP: 20,
      LOGIN_RATE_PER_IP: 30,
      LOGIN_FAILURES_PER_EMAIL: 10,
      INVALID_KEY_RATE_PER_IP: 20,
    });
    expect(loadConfig({ LOGIN_FAILURES_PER_EMAIL: "0" }).LOGIN_FAILURES_PER_EMAIL).toBe(0);
    expect(problems({ SIGNUP_RATE_PER_IP: "-1" })[0]).toStartWith("SIGNUP_RATE_PER_IP:");
  });

  test("values are parsed and typed; DATABASE_URL turns demo mode off unless forced", () => {
    const c = loadConfig({
      PORT: "9000",
      RATE_LIMIT_RPM: "0",
      FX_USD_KRW: "1385.5",
      DATABASE_URL: "postgres://u@h/db",
      REDIS_URL: "redis://r:6379",
    });
    expect(c).toMatchObject({
      PORT: 9000,
      RATE_LIMIT_RPM: 0,
      FX_USD_KRW: 1385.5,
      DATABASE_URL: "postgres://u@h/db",
      REDIS_URL: "redis://r:6379",
      demoMode: false,
    });
    expect(loadConfig({ DATABASE_URL: "postgresql://u@h/db", DEMO_MODE: "true" }).demoMode).toBe(true);
    expect(loadConfig({ DEMO_MODE: "false" }).demoMode).toBe(false);
    // An empty value counts as unset.
    const blank = loadConfig({ ADMIN_TOKEN: "", PORT: "" });
    expect(blank.PORT).toBe(8080);
    expect(blank.ADMIN_TOKEN).toBeUndefined();
  });

  test("every problem is listed at once", () => {
    const p = problems({ PORT: "abc", RATE_LIMIT_RPM: "-1", FX_USD_KRW: "0" });
    expect(p).toHaveLength(3);
    expect(p.find((x) => x.startsWith("PORT:"))).toContain("abc");
    expect(p.some((x) => x.startsWith("RATE_LIMIT_RPM:"))).toBe(true);
    expect(p.some((x) => x.startsWith("FX_USD_KRW:"))).toBe(true);
    try {
      loadConfig({ PORT: "abc", RATE_LIMIT_RPM: "-1", FX_USD_KRW: "0" });
    } catch (e) {
      expect((e as Error).message).toContain("PORT");
      expect((e as Error).message).toContain("RATE_LIMIT_RPM");
      expect((e as Error).message).toContain("FX_USD_KRW");
    }
  });

  test("more invalid values, each reported by name", () => {
    const p = problems({
      PORT: "70000",
      MAX_BODY_BYTES: "1.5",
      DATABASE_URL: "mysql://x",
      REDIS_URL: "http://r",
      ADMIN_TOKEN: "short",
      JWT_SECRET: "too-short",
      LOG_LEVEL: "loud",
      DEMO_MODE: "yes",
      TRUSTED_PROXIES: "10.0.0.0/8, not-an-ip",
    });
    for (const name of [
      "PORT",
      "MAX_BODY_BYTES",
      "DATABASE_URL",
      "REDIS_URL",
      "ADMIN_TOKEN",
      "JWT_SECRET",
      "LOG_LEVEL",
      "DEMO_MODE",
      "TRUSTED_PROXIES",
    ]) {
      expect([name, p.some((x) => x.startsWith(`${name}:`))]).toEqual([name, true]);
    }
    expect(p.filter((x) => x.startsWith("TRUSTED_PROXIES:")).join()).toContain("not-an-ip");
    expect(problems({ TRUSTED_PROXIES: "127.0.0.1, 10.0.0.0/8, ::1, 2001:db8::/32" })).toEqual([]);
  });

  test("provider credentials and base URLs are picked up generically", () => {
    const c = loadConfig({
      OPENAI_API_KEY: "sk-openai",
      ANTHROPIC_BASE_URL: "http://127.0.0.1:9999",
      DEEPSEEK_API_KEY: "sk-ds",
      GROQ_BASE_URL: "http://groq.local",
      ADMIN_TOKEN: "admin-token-0123456789",
      EMPTY_API_KEY: "",
      lowercase_api_key: "x",
    });
    expect(c.providerKeys).toEqual({ OPENAI: "sk-openai", DEEPSEEK: "sk-ds" });
    expect(c.providerBaseUrls).toEqual({ ANTHROPIC: "http://127.0.0.1:9999", GROQ: "http://groq.local" });
  });

  test("VIDEO_CLAIM_MS sets how long a poller's claim lasts; the old VIDEO_LEASE_MS still does when it is unset", () => {
    const claim = (env: Record<string, string>) => runtimeConfig(loadConfig(env), {}).claimMs;
    expect(claim({})).toBe(60_000);
    expect(claim({ VIDEO_CLAIM_MS: "5000" })).toBe(5000);
    expect(claim({ VIDEO_LEASE_MS: "7000" })).toBe(7000);
    expect(claim({ VIDEO_LEASE_MS: "7000", VIDEO_CLAIM_MS: "5000" })).toBe(5000);
    expect(problems({ VIDEO_LEASE_MS: "5" }).some((x) => x.startsWith("VIDEO_LEASE_MS:"))).toBe(true);
  });
});
