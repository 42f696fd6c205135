/**
 * Circuits shared through Redis: two gateway instances on one PostgreSQL database and one
 * Redis, each with its own in-process simulator. What A learned (a provider down) B applies
 * without calling that provider once. A Redis that cannot be reached never fails a call: the
 * instance keeps its own circuits.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { RedisClient } from "bun";
import { postgresAvailable, redisAvailable, startTestGateway, type TestGateway } from "../harness";
import { twoInstancesOnPostgres, within } from "../support/http";
import { chat, money, simChatCalls, tenant, user } from "../support/chat";
import { BREAKER_ENV, circuitOn, metricValue } from "./helpers";

setDefaultTimeout(30_000);

const REDIS_URL = "redis://127.0.0.1:6379";
const shared = (await postgresAvailable()) && (await redisAvailable());

describe.skipIf(!shared)("two instances sharing Redis", () => {
  let a: TestGateway;
  let b: TestGateway;
  let stop: () => Promise<void>;
  beforeAll(async () => {
    // A run cut short may have left an open behind (it expires with its cool-down anyway).
    const r = new RedisClient(REDIS_URL);
    await r.send("DEL", ["gw:circuits"]);
    r.close();
    ({ a, b, stop } = await twoInstancesOnPostgres({ ...BREAKER_ENV, CIRCUIT_COOLDOWN_MS: "10000", REDIS_URL }));
  }, 60_000);
  afterAll(async () => {
    await stop?.();
  });

  test("B skips the provider A found down, without calling it once; nothing is charged", async () => {
    const { key, user: u } = await tenant(a, 100);
    a.gw.sim!.reset();
    b.gw.sim!.reset();
    expect(await circuitOn(b, "deepseek-v3", "deepseek")).toBe("closed");
    for (let i = 0; i < 2; i++)
      expect(
        (await chat(a, key.key, { model: "gpt-4o-mini", messages: user(`down ${i} [sim:fail=503]`) })).status,
      ).toBe(502);
    expect(simChatCalls(a)).toEqual({ openai: 6 });
    expect(await circuitOn(a, "gpt-4o-mini", "openai")).toBe("open");

    // Stored in Redis with a TTL (a dead instance leaves no open behind).
    const redis = new RedisClient(REDIS_URL);
    const ttl = Number(await redis.send("PTTL", ["gw:circuits"]));
    redis.close();
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(20_000);
    // B polls the shared board once a second.
    const took = await within(3000, async () => (await circuitOn(b, "gpt-4o-mini", "openai")) === "open");
    expect(took).not.toBeNull();
    const r = await chat(b, key.key, { model: "gpt-4o-mini", messages: user("hello from B") });
    expect(r.status).toBe(429);
    expect(Number(r.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect(simChatCalls(b)).toEqual({});
    expect(
      await metricValue(b, "gateway_circuit_transitions_total", {
        provider: "openai",
        model: "*",
        to: "open",
        source: "remote",
      }),
    ).toBe(1);
    // Other providers are untouched on B.
    expect((await chat(b, key.key, { model: "claude-haiku-4-5", messages: user("and you?") })).status).toBe(200);
    expect(simChatCalls(b)).toEqual({ anthropic: 1 });
    const charged = await money(b, u.id);
    expect(charged.held).toBe(0n);
    const rows = await b.gw.deps.db.query<{ n: string }>(
      "select count(*)::text as n from ledger_entries where user_id = $1 and kind = 'charge'",
      [u.id],
    );
    expect(rows[0]!.n).toBe("1"); // the one answered call
  });
});

describe("Redis unreachable", () => {
  let g: TestGateway;
  beforeAll(async () => {
    // Port 1: nothing listens; every Redis command fails at once.
    g = await startTestGateway({ env: { ...BREAKER_ENV, REDIS_URL: "redis://127.0.0.1:1" } });
  }, 60_000);
  afterAll(async () => {
    await g?.stop();
  });

  test("calls still succeed, and the circuits work locally", async () => {
    const { key } = await tenant(g, 100);
    g.gw.sim!.reset();
    expect((await chat(g, key.key, { model: "claude-haiku-4-5", messages: user("hello") })).status).toBe(200);
    for (let i = 0; i < 2; i++)
      expect(
        (await chat(g, key.key, { model: "gpt-4o-mini", messages: user(`down ${i} [sim:fail=503]`) })).status,
      ).toBe(502);
    const r = await chat(g, key.key, { model: "gpt-4o-mini", messages: user("skipped") });
    expect(r.status).toBe(429);
    expect(simChatCalls(g)).toEqual({ anthropic: 1, openai: 6 });
  });
});
