/**
 * Circuit breaking end to end: a real gateway, its simulator over real sockets, the database.
 * Counted at the simulator: a provider failing every call stops being called once its circuit
 * opens; a call with no candidate left is 429 upstream_rate_limited with Retry-After and costs
 * nothing (checked in SQL); the circuit shows in /metrics, /v1/models and the request log line;
 * after the cool-down, probe calls close it again (or a failed probe reopens it at once).
 * Rejections (4xx) never open a circuit.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { startTestGateway, type TestGateway } from "../harness";
import { chat, chatFetch, eventually, money, simChatCalls, tenant, user } from "../support/chat";
import { captureLog } from "../support/capture-log";
import { BREAKER_ENV, circuitOn, metricValue } from "./helpers";

setDefaultTimeout(30_000);

let g: TestGateway;
beforeAll(async () => {
  g = await startTestGateway({ env: BREAKER_ENV });
}, 60_000);
afterAll(async () => {
  await g?.stop();
});

const metric = (name: string, labels: Record<string, string>) => metricValue(g, name, labels);

const circuit = (model: string, provider: string) => circuitOn(g, model, provider);

/** The request log lines written while `fn` runs, by request id. */
async function logLines(fn: () => Promise<void>): Promise<Map<string, any>> {
  const out = await captureLog(async () => {
    await fn();
    await Bun.sleep(200); // the lines follow the answers
  });
  const m = new Map<string, any>();
  for (const l of out.split("\n")) {
    if (!l.startsWith("{")) continue;
    const j = JSON.parse(l);
    if (j.msg === "request" && j.request_id) m.set(j.request_id, j);
  }
  return m;
}

describe("a provider failing every call", () => {
  test("is skipped once its circuit opens: no more calls reach it, 429 with Retry-After, nothing charged", async () => {
    const { key, user: u } = await tenant(g, 100);
    g.gw.sim!.reset();
    for (let i = 0; i < 2; i++) {
      const r = await chat(g, key.key, { model: "gpt-4o-mini", messages: user(`down ${i} [sim:fail=503]`) });
      expect(r.status).toBe(502);
    }
    expect(simChatCalls(g)).toEqual({ openai: 6 });
    expect(await metric("gateway_circuit_state", { provider: "openai", model: "*" })).toBe(2);
    expect(await metric("gateway_circuit_state", { provider: "openai", model: "gpt-4o-mini" })).toBe(2);
    expect(
      await metric("gateway_circuit_transitions_total", {
        provider: "openai",
        model: "*",
        to: "open",
        source: "local",
      }),
    ).toBe(1);

    let ids: string[] = [];
    const lines = await logLines(async () => {
      const r = await chat(g, key.key, { model: "gpt-4o-mini", messages: user("anyone there?") });
      expect(r.status).toBe(429);
      expect(JSON.stringify(r.body)).toContain("upstream_rate_limited");
      expect(r.body.detail.retryable).toBe(true);
      expect(r.body.detail.providers).toEqual([{ provider: "openai", model: "gpt-4o-mini", error: "circuit_open" }]);
      const after = Number(r.headers.get("retry-after"));
      expect(after).toBeGreaterThanOrEqual(1);
      expect(after).toBeLessThanOrEqual(2); // the rest of the 1.5 s cool-down, in whole seconds
      // A stream is refused the same way, as JSON before any SSE.
      const s = await chatFetch(g, key.key, { model: "gpt-4o-mini", stream: true, messages: user("stream?") });
      expect(s.status).toBe(429);
      expect(s.headers.get("content-type")).toContain("application/json");
      expect(s.headers.get("retry-after")).not.toBeNull();
      await s.text();
      ids = [r.headers.get("x-request-id")!, s.headers.get("x-request-id")!];
    });
    expect(simChatCalls(g)).toEqual({ openai: 6 }); // not one more call
    for (const id of ids) {
      expect(lines.get(id)?.attempts).toEqual([
        { provider: "openai", model: "gpt-4o-mini", outcome: "skipped", reason: "circuit_open", ms: 0 },
      ]);
      expect(lines.get(id)?.status).toBe(429);
    }

    // The books, in SQL: the whole balance is there, nothing held, no charge, the holds released.
    expect(await money(g, u.id)).toEqual({ balance: 100_000_000n, held: 0n });
    const db = g.gw.deps.db;
    expect(await db.query("select 1 from ledger_entries where user_id = $1 and kind = 'charge'", [u.id])).toEqual([]);
    const holds = await db.query<{ status: string; charged: string | null }>(
      "select status, charged_micro::text as charged from holds where id = any($1::uuid[])",
      [ids],
    );
    expect(holds.map((h) => h.status)).toEqual(["released", "released"]);
    const events = await db.query<{ status: number; cost: string }>(
      "select status, cost_micro::text as cost from usage_events where request_id = any($1::uuid[])",
      [ids],
    );
    expect(events.map((e) => [e.status, e.cost])).toEqual([
      [429, "0"],
      [429, "0"],
    ]);
  });

  test("/v1/models names it unhealthy: its circuit on every model of the provider", async () => {
    expect(await circuit("gpt-4o-mini", "openai")).toBe("open");
    expect(await circuit("gpt-4o", "openai")).toBe("open"); // the provider-wide circuit
    expect(await circuit("claude-haiku-4-5", "anthropic")).toBe("closed");
    const list = await g.call("GET", "/v1/models");
    const mini = list.body.data.find((m: any) => m.id === "gpt-4o-mini");
    expect(mini.providers[0].circuit).toBe("open");
  });

  test("after the cool-down a failed probe reopens it at once (one call, not three)", async () => {
    const { key } = await tenant(g, 100);
    expect(await eventually(async () => (await circuit("gpt-4o-mini", "openai")) === "half_open", 4000, 50)).toBe(true);
    g.gw.sim!.reset();
    const r = await chat(g, key.key, { model: "gpt-4o-mini", messages: user("still down [sim:fail=503]") });
    expect(r.status).toBe(502); // the probe's failure is the answer; its retries were skipped
    expect(simChatCalls(g)).toEqual({ openai: 1 });
    expect(await circuit("gpt-4o-mini", "openai")).toBe("open");
  });

  test("recovers once it heals: the probes succeed and close the circuit", async () => {
    const { key } = await tenant(g, 100);
    expect(await eventually(async () => (await circuit("gpt-4o-mini", "openai")) === "half_open", 4000, 50)).toBe(true);
    g.gw.sim!.reset();
    for (let i = 0; i < 2; i++) {
      const r = await chat(g, key.key, { model: "gpt-4o-mini", messages: user(`healed ${i}`) });
      expect(r.status).toBe(200);
    }
    expect(simChatCalls(g)).toEqual({ openai: 2 });
    expect(await circuit("gpt-4o-mini", "openai")).toBe("closed");
    expect(await metric("gateway_circuit_state", { provider: "openai", model: "*" })).toBe(0);
    expect(
      await metric("gateway_circuit_transitions_total", {
        provider: "openai",
        model: "*",
        to: "closed",
        source: "local",
      }),
    ).toBe(1);
    const r = await chat(g, key.key, { model: "gpt-4o", messages: user("and the rest of its models") });
    expect(r.status).toBe(200);
  });
});

describe("what does not open a circuit", () => {
  test("rejected requests (4xx) never do, however many", async () => {
    const { key } = await tenant(g, 100);
    g.gw.sim!.reset();
    for (let i = 0; i < 8; i++) {
      const r = await chat(g, key.key, { model: "claude-haiku-4-5", messages: user(`bad ${i} [sim:fail=400]`) });
      expect(r.status).toBe(502);
      expect(JSON.stringify(r.body)).toContain("upstream_request_rejected");
    }
    expect(simChatCalls(g)).toEqual({ anthropic: 8 });
    expect(await circuit("claude-haiku-4-5", "anthropic")).toBe("closed");
  });
});

describe("the Responses API goes through the same loop", () => {
  test("a provider with an open circuit is 429 with Retry-After there too", async () => {
    const { key } = await tenant(g, 100);
    for (let i = 0; i < 2; i++)
      await chat(g, key.key, { model: "gemini-2.5-flash", messages: user(`down ${i} [sim:fail=503]`) });
    g.gw.sim!.reset();
    const r = await g.call("POST", "/v1/responses", {
      token: key.key,
      body: { model: "gemini-2.5-flash", input: "hello" },
    });
    expect(r.status).toBe(429);
    expect(r.headers.get("retry-after")).not.toBeNull();
    expect(simChatCalls(g)).toEqual({});
  });
});

describe("video submits use the same circuits", () => {
  test("six failed submits open the provider's circuit; the next is 429 before any job or hold", async () => {
    const { key, user: u } = await tenant(g, 10_000);
    g.gw.sim!.reset();
    const submit = (prompt: string) =>
      g.call("POST", "/v1/video/generations", {
        token: key.key,
        body: { model: "seedance-2-0", duration_seconds: 5, prompt },
      });
    for (let i = 0; i < 6; i++) expect((await submit(`boat ${i} [sim:fail=503]`)).status).toBe(502);
    expect(simChatCalls(g)).toEqual({ seedance: 6 });
    expect(await circuit("seedance-2-0", "seedance")).toBe("open");
    const r = await submit("a paper boat");
    expect(r.status).toBe(429);
    expect(Number(r.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect(r.body.detail.providers).toEqual([{ provider: "seedance", model: "seedance-2-0", error: "circuit_open" }]);
    expect(simChatCalls(g)).toEqual({ seedance: 6 });
    // The six failed jobs exist (each released its hold); the refused submit made none.
    const jobs = await g.gw.deps.db.query<{ status: string }>("select status from video_jobs where user_id = $1", [
      u.id,
    ]);
    expect(jobs.map((j) => j.status)).toEqual(Array(6).fill("failed"));
    expect(await money(g, u.id)).toEqual({ balance: 10_000_000_000n, held: 0n });
  });
});
