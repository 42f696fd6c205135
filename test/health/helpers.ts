/** Shared pieces of the circuit-breaking suites. */
import type { TestGateway } from "../harness";

/** Opens after 6 outcomes with half of them failed (two calls of 1 + 2 retries); 1.5 s cool-down, 2 probes. */
export const BREAKER_ENV: Record<string, string> = {
  CIRCUIT_BREAKER: "on",
  CIRCUIT_MIN_CALLS: "6",
  CIRCUIT_FAILURE_PERCENT: "50",
  CIRCUIT_COOLDOWN_MS: "1500",
  CIRCUIT_PROBES: "2",
  // These suites open circuits with one account among several (test/health/tenant-breaker.test.ts
  // covers the default: failures of several accounts).
  CIRCUIT_MIN_ACCOUNTS: "1",
};

/** One sample of `/metrics` whose labels include `labels` (undefined when there is none). */
export async function metricValue(
  g: TestGateway,
  name: string,
  labels: Record<string, string>,
): Promise<number | undefined> {
  const text = await g.metrics();
  const want = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  for (const line of text.split("\n")) {
    if (!line.startsWith(name + "{")) continue;
    const labelText = line.slice(name.length, line.lastIndexOf("}") + 1);
    if (want.every((w) => labelText.includes(w))) return Number(line.slice(line.lastIndexOf(" ") + 1));
  }
  return undefined;
}

/** The circuit `GET /v1/models/{model}` shows for one of its providers. */
export async function circuitOn(g: TestGateway, model: string, provider: string): Promise<string> {
  const r = await g.call("GET", `/v1/models/${model}`);
  return r.body.providers.find((p: any) => p.id === provider).circuit;
}
