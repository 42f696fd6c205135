/**
 * Codex CLI (the real binary from npm, `codex exec`, headless) against the gateway in demo
 * mode, with the custom model provider of docs/coding-agents.md (`wire_api = "responses"`, the
 * key in the env var `env_key` names), on a Claude, an OpenAI and a Gemini catalog model. One
 * turn uses Codex's shell tool: the simulator calls `exec_command` with the backquoted command
 * of the prompt (`echo`), Codex runs it in its read-only sandbox and sends the output back,
 * the simulator answers in text and the turn ends. Every other host Codex would contact goes
 * through a recording proxy that refuses it: the test fails if Codex tried any. Then the books.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TestGateway } from "../harness";
import { agentTenant, expectChargedOnce, type Maker, modelOf, simCalls, startDemoGateway } from "./helpers";
import { startRefusingProxy, type RefusingProxy } from "./refusing-proxy";

const CODEX = join(import.meta.dir, "..", "..", "node_modules", "@openai", "codex", "bin", "codex.js");
/** Wall-clock bound of one `codex exec` run; it is killed after this. */
const RUN_LIMIT_MS = 120_000;

let g: TestGateway;
let proxy: RefusingProxy;
let dir: string;
beforeAll(async () => {
  g = await startDemoGateway();
  proxy = await startRefusingProxy();
  dir = mkdtempSync(join(tmpdir(), "codex-test-"));
}, 60_000);
afterAll(async () => {
  proxy?.stop();
  await g?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** The CODEX_HOME config.toml of docs/coding-agents.md, with this gateway's URL. */
function configToml(baseUrl: string, model: string): string {
  return `model = "${model}"
model_provider = "gateway"
approval_policy = "never"
sandbox_mode = "read-only"

[model_providers.gateway]
name = "Model gateway"
base_url = "${baseUrl}/v1"
env_key = "GATEWAY_API_KEY"
wire_api = "responses"

[analytics]
enabled = false

[features]
plugins = false
`;
}

interface CodexRun {
  code: number | null;
  events: any[];
  stderr: string;
}

/** The directory Codex works in for `model` (it holds a README.md). */
const workDir = (model: string) => join(dir, `work-${model}`);

async function runCodex(model: string, key: string, prompt: string): Promise<CodexRun> {
  const home = join(dir, `home-${model}`);
  const work = workDir(model);
  mkdirSync(home, { recursive: true });
  mkdirSync(work, { recursive: true });
  writeFileSync(join(home, "config.toml"), configToml(g.url, model));
  writeFileSync(join(work, "README.md"), "A scratch directory for a Codex test.\n");
  const proc = Bun.spawn(
    [process.execPath, CODEX, "exec", "--json", "--strict-config", "--skip-git-repo-check", "--ephemeral", prompt],
    {
      cwd: work,
      stdin: "ignore",
      stdout: "pipe",
      stderr: "pipe",
      env: {
        PATH: process.env.PATH ?? "/usr/bin:/bin",
        HOME: home,
        CODEX_HOME: home,
        GATEWAY_API_KEY: key,
        // Anything but the gateway goes to the refusing proxy, which records the host.
        HTTPS_PROXY: proxy.url,
        HTTP_PROXY: proxy.url,
        ALL_PROXY: proxy.url,
        NO_PROXY: "127.0.0.1,localhost",
      },
    },
  );
  const timer = setTimeout(() => proc.kill(), RUN_LIMIT_MS);
  const [stdout, stderr, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  clearTimeout(timer);
  const events = stdout
    .split("\n")
    .filter((l) => l.startsWith("{"))
    .map((l) => JSON.parse(l));
  return { code, events, stderr };
}

const PROVIDER: Record<Maker, string> = { anthropic: "anthropic", openai: "openai", google: "google" };
const NAME: Record<Maker, string> = { anthropic: "a Claude", openai: "an OpenAI", google: "a Gemini" };

describe("codex exec against the gateway (wire_api = responses)", () => {
  for (const maker of ["anthropic", "openai", "google"] as const) {
    test(`${NAME[maker]} model: one shell tool call run read-only, a text answer, charged once per call`, async () => {
      const tenant = await agentTenant(g);
      const model = await modelOf(g, tenant.key, maker);
      g.gw.sim!.reset();
      proxy.reset();
      // The command's output (sim-42) differs from its text: only a real run can produce it.
      const run = await runCodex(model, tenant.key, "Use exec_command to run `echo sim-$((6*7))` and report.");
      if (run.code !== 0) console.error(run.stderr);
      expect(run.code).toBe(0);

      const done = run.events.filter((e) => e.type === "item.completed").map((e) => e.item);
      // Codex usually reports the command as an item (not always: see the read-only test).
      for (const command of done.filter((i) => i.type === "command_execution")) {
        expect(command.command).toContain("echo sim-$((6*7))");
        expect(command.exit_code).toBe(0);
        expect(command.aggregated_output).toContain("sim-42");
      }
      // The simulator's answer to the tool result echoes the end of the command's output, so
      // Codex ran the command and sent its output back; then the turn ended with this text.
      const answer = done.filter((i) => i.type === "agent_message").at(-1);
      expect(answer.text).toStartWith(`Simulated reply from ${PROVIDER[maker]}/`);
      expect(answer.text).toContain("sim-42");
      expect(run.events.at(-1)).toMatchObject({ type: "turn.completed" });
      expect(run.events.some((e) => e.type === "turn.failed" || e.type === "error")).toBe(false);
      expect(proxy.hosts()).toEqual([]);

      // Two model calls: the one that called the tool and the one that answered its result.
      const calls = simCalls(g);
      expect(calls).toBe(2);
      // An OpenAI model gets Codex's own body on OpenAI's Responses API (relayed); the others the translation.
      const routes = Object.keys(g.gw.sim!.stats().calls[PROVIDER[maker]] ?? {});
      if (maker === "openai") expect(routes).toEqual(["POST /v1/responses"]);
      else expect(routes).not.toContain("POST /v1/responses");
      const b = await expectChargedOnce(g, tenant, { calls, api: "responses", provider: PROVIDER[maker], model });
      // What Codex shows: the turn's tokens, summed over its calls, as the books charged them.
      const usage = run.events.at(-1).usage;
      expect(usage.input_tokens).toBe(b.events.reduce((s, e) => s + e.prompt_tokens, 0));
      expect(usage.output_tokens).toBe(b.events.reduce((s, e) => s + e.completion_tokens, 0));
    }, 180_000);
  }

  test("the sandbox is read-only: a write the model asks for fails, and the turn still ends", async () => {
    const tenant = await agentTenant(g);
    const model = await modelOf(g, tenant.key, "openai");
    g.gw.sim!.reset();
    const run = await runCodex(model, tenant.key, "Use exec_command to run `touch written-by-codex.txt`");
    expect(run.code).toBe(0);
    expect(existsSync(join(workDir(model), "written-by-codex.txt"))).toBe(false);
    // The command item is sometimes left out of `--json` for a failed command; the simulator's
    // answer echoes the end of what Codex sent back, the shell's refusal.
    for (const e of run.events.filter((e) => e.type === "item.completed" && e.item.type === "command_execution")) {
      expect(e.item.exit_code).not.toBe(0);
    }
    const answer = run.events.filter((e) => e.type === "item.completed" && e.item.type === "agent_message").at(-1);
    expect(answer.item.text).toContain("Read-only file system");
    expect(run.events.at(-1)).toMatchObject({ type: "turn.completed" });
    await expectChargedOnce(g, tenant, { calls: simCalls(g), api: "responses", provider: "openai", model });
    expect(simCalls(g)).toBe(2);
  }, 180_000);
});
