/**
 * Hedged requests and the rest of the pipeline: the request's log line shows the race (the
 * cancelled loser, the hedge that answered), and a provider whose circuit is open is never
 * hedged to. deepseek-v3: deepseek first, together second.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { startTestGateway, type TestGateway } from "../harness";
import { captureLog } from "../support/capture-log";
import { BREAKER_ENV, circuitOn } from "../health/helpers";
import { chat, eventually, simChatCalls, tenant, user } from "../support/chat";

setDefaultTimeout(30_000);

let g: TestGateway;
beforeAll(async () => {
  g = await startTestGateway({
    env: { ...BREAKER_ENV, CIRCUIT_COOLDOWN_MS: "60000", HEDGE_MIN_DELAY_MS: "50", HEDGE_MAX_DELAY_MS: "250" },
  });
}, 60_000);
afterAll(async () => {
  await g?.stop();
});

async function consenting() {
  const t = await tenant(g, 1000, { hedge: true });
  await g.admin("PATCH", `/v1/admin/users/${t.user.id}`, { xborder_training_consent: true });
  return t;
}

describe("hedging and the pipeline", () => {
  test("the log line lists the cancelled primary and the hedge that answered", async () => {
    const { key } = await consenting();
    let id = "";
    const out = await captureLog(async () => {
      const r = await chat(g, key.key, {
        model: "deepseek-v3",
        messages: user("logged [sim:latency@deepseek=1000]"),
        provider: { hedge: true },
      });
      expect(r.body.provider).toBe("together");
      id = r.headers.get("x-request-id")!;
      await eventually(() => false, 300); // the line comes after the answer
    });
    const line = out
      .split("\n")
      .filter((l) => l.trim())
      .map((l) => JSON.parse(l))
      .find((j) => j.msg === "request" && j.request_id === id);
    expect(line.provider).toBe("together");
    expect(line.attempts.map((a: any) => [a.provider, a.outcome, a.reason])).toEqual([
      ["deepseek", "cancelled", "hedge_lost"],
      ["together", "ok", "hedge"],
    ]);
    expect(line.attempts[0].ms).toBeGreaterThanOrEqual(50);
  });

  test("a provider whose circuit is open is never hedged to", async () => {
    const { key } = await consenting();
    // Two calls of three failed attempts each open together's circuit (BREAKER_ENV).
    for (let i = 0; i < 2; i++)
      await chat(g, key.key, { model: "deepseek-v3@together", messages: user(`break ${i} [sim:fail=503]`) });
    expect(await circuitOn(g, "deepseek-v3", "together")).toBe("open");
    g.gw.sim!.reset();
    const t0 = performance.now();
    const r = await chat(g, key.key, {
      model: "deepseek-v3",
      messages: user("no hedge to an open circuit [sim:latency@deepseek=600]"),
      provider: { hedge: true },
    });
    expect(r.status).toBe(200);
    expect(r.body.provider).toBe("deepseek");
    expect(performance.now() - t0).toBeGreaterThanOrEqual(600);
    expect(simChatCalls(g)).toEqual({ deepseek: 1 });
  });
});
