/**
 * The real Claude Code CLI, headless (`claude -p … --output-format json`), against a real
 * gateway in demo mode whose simulator stands in for every provider, with only the settings a
 * user is given (docs/claude-code.md): its default model, `--model` with a Claude model and
 * with its `sonnet` alias, and `ANTHROPIC_MODEL` naming an OpenAI and a Gemini model
 * (translated). Claude Code talks to the gateway through a recording proxy, which counts the
 * calls it got answered. After each run: the CLI exited 0 with a success result after one tool
 * turn (the simulator calls `Read` on the file the prompt names, Claude Code runs it, the
 * simulator answers with its text); the tokens it shows are the ones the gateway billed; and
 * the books in SQL hold one usage event and one charge per answered call, nothing held, the
 * balance down by exactly the charges.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { RecordingProxy } from "../support/chat";
import { postgresAvailable, startTestGateway, type TestGateway } from "../harness";
import { books, parseSse, tenant } from "../messages/helpers";
import { microToKrwRounded } from "../../src/lib/money";
import { join } from "node:path";
import { FILE_NAME, FILE_TEXT, runClaude, type ClaudeRun } from "./claude-code-run";

setDefaultTimeout(150_000);

const CREDIT_KRW = 20_000;
/** One tool turn: the simulator calls the tool the prompt names (Read) on the path it names (docs/simulator.md). */
const PROMPT = (cwd: string) => `Read the file ${join(cwd, FILE_NAME)} and tell me what it says.`;

let g: TestGateway;
let proxy: RecordingProxy;
beforeAll(async () => {
  // The production database when one is reachable (CI must have it), else PGlite.
  g = await startTestGateway({ db: (await postgresAvailable()) ? "pg" : "pglite", env: { DEMO_MODE: "true" } });
  proxy = new RecordingProxy();
  proxy.aim(g.url);
}, 60_000);
afterAll(async () => {
  await g?.stop();
  proxy?.stop();
});

/** One run on a new tenant with a default key: the run, its answered calls and the tenant's books. */
async function scenario(model: { flag?: string; env?: Record<string, string> }) {
  const { user, key } = await tenant(g, CREDIT_KRW);
  proxy.clear();
  const run = await runClaude({ baseUrl: proxy.url, key: key.key, prompt: PROMPT, model: model.flag, env: model.env });
  await Promise.all(proxy.bodies.map((b) => b.ended));
  const calls = proxy.bodies.filter((b) => b.path === "/v1/messages");
  const answered = calls.filter((b) => b.response.includes("event: message_stop"));
  return { run, calls, answered, books: await books(g, user.id) };
}

/** What every run must show: success, Claude Code's tokens = the gateway's, every answered call charged once. */
function expectGoodRun(s: Awaited<ReturnType<typeof scenario>>, model: string) {
  const { run, calls, answered, books: b } = s;
  expect(describeRun(run)).toMatchObject({ code: 0, subtype: "success", is_error: false });
  expect(calls.length).toBeGreaterThan(0);
  expect(answered).toHaveLength(calls.length);
  // Every call names the model asked for.
  for (const c of calls) expect(c.body.model).toBe(model);
  // One tool turn: the model called Read, Claude Code read the file and sent its text back, the model answered.
  expect(run.result!.num_turns).toBe(2);
  expect(calls).toHaveLength(2);
  const first = parseSse(answered[0]!.response);
  expect(first.find((f) => f.json?.content_block?.type === "tool_use")?.json.content_block.name).toBe("Read");
  const results = calls[1]!.body.messages.at(-1).content.filter((b: any) => b.type === "tool_result");
  expect(results).toHaveLength(1);
  expect(results[0].is_error).toBeUndefined();
  expect(JSON.stringify(results[0].content)).toContain(FILE_TEXT);
  expect(run.result!.result).toContain(FILE_TEXT);
  expect(b.events).toHaveLength(answered.length);
  expect(b.charges).toHaveLength(answered.length);
  expect(new Set(b.charges.map((c: any) => c.request_id))).toEqual(new Set(b.events.map((e: any) => e.request_id)));
  expect(b.events.every((e: any) => e.status === 200 && e.api === "messages")).toBe(true);
  expect(b.holds.every((h: any) => h.status === "settled")).toBe(true);
  const byId = new Map(b.events.map((e: any) => [e.request_id, e]));
  for (const c of b.charges) expect(-BigInt(c.amount_micro)).toBe(BigInt((byId.get(c.request_id) as any).cost_micro));
  const total = b.charges.reduce((sum: bigint, c: any) => sum - BigInt(c.amount_micro), 0n);
  expect(total).toBeGreaterThan(0n);
  expect(b.balance).toBe(BigInt(CREDIT_KRW) * 1_000_000n - total);
  expect(b.held).toBe(0n);
  // The tokens Claude Code shows (its `usage`, summed over its calls) are the ones billed.
  const u = run.result!.usage;
  const prompt = b.events.reduce((n: number, e: any) => n + e.prompt_tokens, 0);
  const completion = b.events.reduce((n: number, e: any) => n + e.completion_tokens, 0);
  expect(u.input_tokens + u.cache_creation_input_tokens + u.cache_read_input_tokens).toBe(prompt);
  expect(u.output_tokens).toBe(completion);
  // The gateway's cost rides on each stream's last message_delta (what Claude Code drops): it is the charge.
  const delta = answered.map((c) => parseSse(c.response).findLast((f) => f.event === "message_delta")!.json.usage);
  const costs = delta.map((d) => d.cost_krw).sort();
  expect(costs).toEqual(b.events.map((e: any) => microToKrwRounded(BigInt(e.cost_micro))).sort());
  // Claude Code's own cost (`total_cost_usd`, `modelUsage[m].costUSD`) comes from its price list.
  expect(Object.keys(run.result!.modelUsage)).toEqual([model]);
  const mine = run.result!.modelUsage[model];
  expect(mine.costUSD).toBe(run.result!.total_cost_usd);
  return { gatewayUsd: delta.reduce((n, d) => n + d.cost_usd, 0), shown: mine };
}

/** The parts of a run a failure message needs. */
function describeRun(run: ClaudeRun) {
  return {
    code: run.code,
    subtype: run.result?.subtype,
    is_error: run.result?.is_error,
    result: run.result?.result,
    stderr: run.stderr.slice(0, 2000),
    stdout: run.result ? undefined : run.stdout.slice(0, 2000),
  };
}

describe("Claude Code 2.1.332 against the gateway", () => {
  test("no model setting: its default model, with mid-conversation system messages", async () => {
    const s = await scenario({});
    const cost = expectGoodRun(s, "claude-opus-5-5");
    expect(s.calls[0]!.body.messages.some((m: any) => m.role === "system")).toBe(true);
    // A Claude model is in Claude Code's list: it shows the list price, which is what the gateway charged.
    expect(cost.shown.costBasis).toBe("list");
    expect(cost.shown.costUSD).toBeCloseTo(cost.gatewayUsd, 9);
  });

  test("--model with a Claude model", async () => {
    const s = await scenario({ flag: "claude-haiku-4-5" });
    const cost = expectGoodRun(s, "claude-haiku-4-5");
    expect(cost.shown.costBasis).toBe("list");
    expect(cost.shown.costUSD).toBeCloseTo(cost.gatewayUsd, 9);
  });

  test("--model with its alias sonnet: claude-sonnet-5-5", async () => {
    const s = await scenario({ flag: "sonnet" });
    const cost = expectGoodRun(s, "claude-sonnet-5-5");
    // Its list prices a cache read of this model at 0.10 USD/M, the catalog's source at 0.20:
    // the two differ by the cache reads alone (docs/claude-code.md).
    expect(cost.shown.costBasis).toBe("list");
  });

  test("ANTHROPIC_MODEL naming an OpenAI model (translated)", async () => {
    const s = await scenario({ env: { ANTHROPIC_MODEL: "gpt-5.5" } });
    const cost = expectGoodRun(s, "gpt-5.5");
    // A model Claude Code does not know: its cost is a guess at a default price, not the charge.
    expect(cost.shown.costBasis).toBe("unknown");
    expect(cost.shown.costUSD).not.toBeCloseTo(cost.gatewayUsd, 6);
    // Claude Code sends this unknown model mid-conversation system messages: taken, not a 422.
    expect(s.calls[0]!.body.messages.some((m: any) => m.role === "system")).toBe(true);
  });

  test("ANTHROPIC_MODEL naming a Gemini model (translated)", async () => {
    const s = await scenario({ env: { ANTHROPIC_MODEL: "gemini-3.5-flash" } });
    const cost = expectGoodRun(s, "gemini-3.5-flash");
    expect(cost.shown.costBasis).toBe("unknown");
    expect(s.calls[0]!.body.messages.some((m: any) => m.role === "system")).toBe(true);
  });
});
