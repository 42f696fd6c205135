/**
 * What circuit breaking saves a caller while a provider is down: a model with two providers
 * (deepseek-v3 at DeepSeek, then Together) whose first provider fails every call. Without
 * breaking, each call spends 1 + 2 retries on DeepSeek with the default backoff (RETRY_BASE_MS
 * 200) before Together answers; once the circuit is open, Together answers at once. Both p50s
 * are printed; the figures in docs/circuit-breaking.md come from this test.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { startTestGateway, type TestGateway } from "../harness";
import { chat, chatFetch, simChatCalls, tenant, user } from "../support/chat";
import { BREAKER_ENV } from "./helpers";
import { captureLog } from "../support/capture-log";

setDefaultTimeout(60_000);

const CALLS = 9;
// The default backoff, so the "before" figure is what a caller waits today.
const env = { RETRY_BASE_MS: "200" };
let off: TestGateway;
let on: TestGateway;
beforeAll(async () => {
  [off, on] = await Promise.all([
    startTestGateway({ env: { ...env, CIRCUIT_BREAKER: "off" } }),
    startTestGateway({ env: { ...env, ...BREAKER_ENV, CIRCUIT_COOLDOWN_MS: "60000" } }),
  ]);
}, 60_000);
afterAll(async () => {
  await off?.stop();
  await on?.stop();
});

const p50 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function timedCalls(g: TestGateway, key: string, n: number, tag: string): Promise<number[]> {
  const ms: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    const r = await chat(g, key, { model: "deepseek-v3", messages: user(`${tag} ${i} [sim:fail@deepseek=503]`) });
    ms.push(performance.now() - t0);
    expect(r.status).toBe(200);
    expect(r.body.provider).toBe("together");
  }
  return ms;
}

const consent = (g: TestGateway, id: string) =>
  g.admin("PATCH", `/v1/admin/users/${id}`, { xborder_training_consent: true });

describe("a call with fallback while its first provider is down", () => {
  test("p50 before the circuit opens (breaking off: 3 failed attempts with backoff) vs after (skipped)", async () => {
    const a = await tenant(off, 500);
    await consent(off, a.user.id);
    off.gw.sim!.reset();
    const before = await timedCalls(off, a.key.key, CALLS, "off");
    expect(simChatCalls(off)).toEqual({ deepseek: 3 * CALLS, together: CALLS });

    const b = await tenant(on, 500);
    await consent(on, b.user.id);
    await timedCalls(on, b.key.key, 2, "opening"); // 6 failed outcomes: the circuit opens
    on.gw.sim!.reset();
    const after = await timedCalls(on, b.key.key, CALLS, "on");
    expect(simChatCalls(on)).toEqual({ together: CALLS }); // DeepSeek is not called at all
    // A stream takes the same shortcut.
    const s = await chatFetch(on, b.key.key, {
      model: "deepseek-v3",
      stream: true,
      messages: user("stream [sim:fail@deepseek=503]"),
    });
    expect(s.status).toBe(200);
    expect(await s.text()).toContain("[DONE]");
    expect(simChatCalls(on)).toEqual({ together: CALLS + 1 });

    // The log line names the skipped provider before the one that answered.
    let id = "";
    const out = await captureLog(async () => {
      const r = await chat(on, b.key.key, { model: "deepseek-v3", messages: user("logged [sim:fail@deepseek=503]") });
      id = r.headers.get("x-request-id")!;
      await Bun.sleep(200);
    });
    const line = out
      .split("\n")
      .filter((l) => l.startsWith("{"))
      .map((l) => JSON.parse(l))
      .find((j) => j.msg === "request" && j.request_id === id);
    expect(line.attempts.map((a: any) => [a.provider, a.outcome, a.reason])).toEqual([
      ["deepseek", "skipped", "circuit_open"],
      ["together", "ok", undefined],
    ]);

    console.log(
      `deepseek-v3 with DeepSeek down, ${CALLS} calls each: p50 ${p50(before).toFixed(1)} ms before the circuit opens, ${p50(after).toFixed(1)} ms after (min ${Math.min(...before).toFixed(1)} / ${Math.min(...after).toFixed(1)}, max ${Math.max(...before).toFixed(1)} / ${Math.max(...after).toFixed(1)})`,
    );
    // Two backoffs of 200 and 400 ms (jittered to 50–150 %) at least 300 ms in all; the skip costs none.
    expect(p50(before)).toBeGreaterThan(300);
    expect(p50(after)).toBeLessThan(p50(before) / 3);
  });
});
