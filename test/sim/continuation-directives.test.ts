/**
 * What the continuation tests (test/chat/continuation.test.ts) need of the simulator:
 * `[sim:drop@PROVIDER=N]` breaks only that provider's stream, and an Anthropic prefill is held
 * to Anthropic's rules (no trailing whitespace, none with thinking) and otherwise answered.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { startSimulator, type Simulator } from "../../src/sim/index.ts";
import { ANTHROPIC_AUTH, OPENAI_AUTH, parseSse, postJson, readUntilBreak } from "./helpers.ts";

let sim: Simulator;
beforeAll(async () => {
  sim = await startSimulator();
});
afterAll(() => sim.stop());
beforeEach(() => sim.reset());

const chat = (provider: string, text: string) =>
  postJson(
    `${sim.baseUrl(provider)}/v1/chat/completions`,
    { model: "m", stream: true, messages: [{ role: "user", content: text }] },
    OPENAI_AUTH,
  );
const messages = (body: object) =>
  postJson(`${sim.baseUrl("anthropic")}/v1/messages`, { model: "c", max_tokens: 300, ...body }, ANTHROPIC_AUTH);

describe("[sim:drop@PROVIDER=N]", () => {
  test("breaks the named provider's stream only, and wins over a plain drop", async () => {
    const broken = await readUntilBreak(await chat("deepseek", "x [sim:drop@deepseek=1]"));
    expect(broken.error).toBeDefined();
    expect(parseSse(broken.text)).toHaveLength(2); // role chunk + 1 content chunk
    const whole = await readUntilBreak(await chat("together", "x [sim:drop@deepseek=1]"));
    expect(whole.error).toBeUndefined();
    expect(whole.text).toContain("[DONE]");
    const scoped = await readUntilBreak(await chat("deepseek", "x [sim:drop=0] [sim:drop@deepseek=2]"));
    expect(parseSse(scoped.text)).toHaveLength(3);
  });
});

describe("an Anthropic prefill", () => {
  const user = { role: "user", content: "go on" };
  test("is answered when it ends in a word", async () => {
    const res = await messages({ messages: [user, { role: "assistant", content: "Once upon a" }] });
    expect(res.status).toBe(200);
  });

  test("ending in whitespace, or with thinking on, is refused with 400", async () => {
    const spaced = await messages({
      messages: [user, { role: "assistant", content: [{ type: "text", text: "Once upon a " }] }],
    });
    expect(spaced.status).toBe(400);
    expect(((await spaced.json()) as any).error.message).toContain("trailing whitespace");
    const thinking = await messages({
      max_tokens: 3000,
      thinking: { type: "enabled", budget_tokens: 1024 },
      messages: [user, { role: "assistant", content: "Once" }],
    });
    expect(thinking.status).toBe(400);
  });
});
