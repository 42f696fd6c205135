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
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
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

async function runCodex(model: string, key: string, prompt: string): Promise<CodexRun> {
  const home = join(dir, `home-${model}`);
  const work = join(dir, `work-${model}`);
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
      const run = await runCodex(model, tenant.key, "Use exec_command to run `echo sim-codex` and report.");
      if (run.code !== 0) console.error(run.stderr);
      expect(run.code).toBe(0);

      const done = run.events.filter((e) => e.type === "item.completed").map((e) => e.item);
      const command = done.find((i) => i.type === "command_execution");
      expect(command).toBeDefined();
      expect(command.command).toContain("echo sim-codex");
      expect(command.exit_code).toBe(0);
      expect(command.aggregated_output).toContain("sim-codex");
      // The simulator's answer to the tool result echoes the end of Codex's output: the loop ended.
      const answer = done.filter((i) => i.type === "agent_message").at(-1);
      expect(answer.text).toStartWith(`Simulated reply from ${PROVIDER[maker]}/`);
      expect(answer.text).toContain("sim-codex");
      expect(run.events.at(-1)).toMatchObject({ type: "turn.completed" });
      expect(run.events.some((e) => e.type === "turn.failed" || e.type === "error")).toBe(false);
      expect(proxy.hosts()).toEqual([]);

      // Two model calls: the one that called the tool and the one that answered its result.
      const calls = simCalls(g);
      expect(calls).toBe(2);
      await expectChargedOnce(g, tenant, { calls, api: "responses", provider: PROVIDER[maker], model });
    }, 180_000);
  }
});
