/**
 * Issue 28 #5: one tenant's calls that time out (its own requests, `[sim:hang]` here) must not
 * open a provider's circuit for everybody. Before, each timed-out JSON call was tried three
 * times and every try counted as a provider failure: one account opened OpenAI's circuit and
 * the other tenants' calls got 429 `upstream_rate_limited`. Now a circuit opens only on failures
 * of min(CIRCUIT_MIN_ACCOUNTS, accounts that called) distinct accounts (default 3), and a
 * timeout is not sent again to the same provider (one upstream attempt, charged nothing).
 * A real outage that several accounts see still opens the circuit.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { startTestGateway, type TestGateway } from "../harness";
import { chat, money, simChatCalls, tenant, user } from "../support/chat";
import { circuitOn } from "./helpers";

setDefaultTimeout(60_000);

describe("one tenant's timeouts and the shared circuit", () => {
  let g: TestGateway;
  beforeAll(async () => {
    g = await startTestGateway({
      env: {
        CIRCUIT_BREAKER: "on",
        CIRCUIT_MIN_CALLS: "6",
        CIRCUIT_FAILURE_PERCENT: "50",
        CIRCUIT_COOLDOWN_MS: "60000",
        UPSTREAM_FIRST_BYTE_TIMEOUT_MS: "300",
      },
    });
  }, 60_000);
  afterAll(async () => {
    await g?.stop();
  });

  test("an attacker's timed-out calls leave the circuit closed for a victim on the same model", async () => {
    const attacker = await tenant(g, 100);
    const victim = await tenant(g, 100);
    g.gw.sim!.reset();
    const victimStatuses: number[] = [];
    for (let i = 0; i < 8; i++) {
      const a = await chat(g, attacker.key.key, {
        model: "gpt-4o-mini",
        messages: user(`a huge prompt ${i} [sim:hang]`),
      });
      expect(a.status).toBe(502);
      const v = await chat(g, victim.key.key, { model: "gpt-4o-mini", messages: user(`victim ${i}`) });
      victimStatuses.push(v.status);
    }
    expect(victimStatuses).toEqual(Array(8).fill(200));
    expect(await circuitOn(g, "gpt-4o-mini", "openai")).toBe("closed");
    // One upstream attempt per timed-out call (8) and one per victim call (8), not 3 × 8 + 8.
    expect(simChatCalls(g)).toEqual({ openai: 16 });
    // The attacker's timed-out calls are charged nothing, and nothing stays held.
    expect(await money(g, attacker.user.id)).toEqual({ balance: 100_000_000n, held: 0n });
  });

  test("an outage seen by three accounts still opens it: then everyone's call is 429 circuit_open", async () => {
    for (let a = 0; a < 3; a++) {
      const t = await tenant(g, 100);
      for (let i = 0; i < 2; i++) {
        const r = await chat(g, t.key.key, { model: "gpt-4o-mini", messages: user(`down ${a}.${i} [sim:fail=503]`) });
        expect([429, 502]).toContain(r.status);
      }
    }
    expect(await circuitOn(g, "gpt-4o-mini", "openai")).toBe("open");
    const other = await tenant(g, 100);
    const r = await chat(g, other.key.key, { model: "gpt-4o-mini", messages: user("after the outage") });
    expect(r.status).toBe(429);
    expect(r.body.detail.error).toBe("upstream_rate_limited");
    expect(r.body.detail.providers[0].error).toBe("circuit_open");
  });
});
