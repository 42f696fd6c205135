/**
 * Runs the real Claude Code CLI (the npm package's native binary) headless against a gateway:
 * `claude -p <prompt> --output-format json` in a fresh working directory and a fresh HOME, with
 * only the settings docs/claude-code.md gives a user, bounded by `--max-turns` and a kill timer.
 * The environment is built from nothing (no ANTHROPIC_* of the machine leaks in).
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export const CLAUDE = join(import.meta.dir, "../../node_modules/.bin/claude");

/** The file each run's working directory holds, and the line a Read of it must bring back. */
export const FILE_NAME = "notes.txt";
export const FILE_TEXT = "The gateway test secret word is PERIWINKLE-42.";

export interface ClaudeRun {
  code: number | null;
  /** Claude Code's JSON result (`type: "result"`), null when stdout was not JSON. */
  result: Record<string, any> | null;
  stdout: string;
  stderr: string;
  /** The working directory the run used (removed after the run). */
  cwd: string;
}

export interface RunOptions {
  baseUrl: string;
  key: string;
  /** The prompt, or a function of the run's working directory (to name a file in it). */
  prompt: string | ((cwd: string) => string);
  /** `--model` (else Claude Code's default, or `ANTHROPIC_MODEL` from `env`). */
  model?: string;
  env?: Record<string, string>;
  maxTurns?: number;
  timeoutMs?: number;
}

/** One headless run; never throws for a failed run (the caller asserts on it). */
export async function runClaude(o: RunOptions): Promise<ClaudeRun> {
  const home = mkdtempSync(join(tmpdir(), "cc-home-"));
  const cwd = mkdtempSync(join(tmpdir(), "cc-work-"));
  writeFileSync(join(cwd, FILE_NAME), FILE_TEXT + "\n");
  const prompt = typeof o.prompt === "string" ? o.prompt : o.prompt(cwd);
  const args = [CLAUDE, "-p", prompt, "--output-format", "json", "--max-turns", String(o.maxTurns ?? 4)];
  if (o.model) args.push("--model", o.model);
  const proc = Bun.spawn(args, {
    cwd,
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
    env: {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      HOME: home,
      ANTHROPIC_BASE_URL: o.baseUrl,
      ANTHROPIC_AUTH_TOKEN: o.key,
      // Keeps Claude Code off Anthropic's other hosts (telemetry, error reports, updates).
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
      ...o.env,
    },
  });
  const timer = setTimeout(() => proc.kill(), o.timeoutMs ?? 90_000);
  try {
    const [stdout, stderr] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text()]);
    const code = await proc.exited;
    let result: Record<string, any> | null = null;
    try {
      result = JSON.parse(stdout);
    } catch {}
    return { code, result, stdout, stderr, cwd };
  } finally {
    clearTimeout(timer);
    rmSync(home, { recursive: true, force: true });
    rmSync(cwd, { recursive: true, force: true });
  }
}
