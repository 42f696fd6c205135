/**
 * The simulator's agent turn reads what the user wrote, not the `<system-reminder>` blocks an
 * agent adds to the user's turn: Claude Code puts its working directory and other tools'
 * names there, before the user's words, so without this the simulator would Read the
 * directory or call the first tool a reminder mentions.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startSimulator, type Simulator } from "../../src/sim/index.ts";
import { ANTHROPIC_AUTH, postJson } from "./helpers.ts";

let sim: Simulator;
beforeAll(async () => {
  sim = await startSimulator();
});
afterAll(() => sim.stop());

const schema = (props: Record<string, unknown>) => ({ type: "object", properties: props });
const tools = [
  { name: "ToolSearch", input_schema: schema({ query: { type: "string" } }) },
  { name: "Read", input_schema: schema({ file_path: { type: "string" } }) },
];

test("the path and the tool come from the user's words, after Claude Code's reminders", async () => {
  const reminder =
    "<system-reminder>\n# Environment\n - Primary working directory: /tmp/project\nUse ToolSearch to load deferred tools.\n</system-reminder>\n";
  const res = await postJson(
    `${sim.baseUrl("anthropic")}/v1/messages`,
    {
      model: "claude-haiku-4-5",
      max_tokens: 500,
      tools,
      messages: [
        {
          role: "user",
          content: [
            { type: "text", text: reminder },
            { type: "text", text: "Read the file /tmp/project/notes.txt and tell me what it says." },
          ],
        },
      ],
    },
    ANTHROPIC_AUTH,
  );
  expect(res.status).toBe(200);
  const call = (await res.json()).content.find((b: any) => b.type === "tool_use");
  expect(call).toMatchObject({ name: "Read", input: { file_path: "/tmp/project/notes.txt" } });
});
