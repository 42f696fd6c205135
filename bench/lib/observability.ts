/** What the gateway wrote while bench/run.ts measured it: request log lines, and the trace exports its sink took. */
import { existsSync, readFileSync } from "node:fs";
import type { Stack } from "./stack";

export async function observability(s: Stack) {
  const text = existsSync(s.gatewayLog) ? readFileSync(s.gatewayLog, "utf8") : "";
  const requestLines = text.split("\n").filter((l) => l.includes('"msg":"request"')).length;
  const sink = s.otelUrl
    ? ((await (await fetch(`${s.otelUrl}/stats`)).json()) as { exports: number; bytes: number })
    : null;
  return {
    logLevel: process.env.LOG_LEVEL ?? "info",
    logRequests: process.env.LOG_REQUESTS ?? "on",
    requestLogLines: requestLines,
    otlpExports: sink,
  };
}
