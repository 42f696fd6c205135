/**
 * Before/after table of two result files: `bun bench/compare.ts [before] [after]`
 * (defaults: bench/results/before.json and latest.json) → bench/results/compare.md.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const dir = join(import.meta.dir, "results");
const [a = "before", b = "latest"] = process.argv.slice(2);
const load = (n: string) => JSON.parse(readFileSync(join(dir, `${n}.json`), "utf8"));
const before = load(a);
const after = load(b);
const f = (x: unknown, d = 2) => (typeof x === "number" && Number.isFinite(x) ? x.toFixed(d) : "–");
const get = (o: any, path: string) => path.split(".").reduce((v, k) => (v == null ? undefined : v[k]), o);

const rows: [string, string, number, string][] = [
  [
    "non-streaming p50 added over direct (ms)",
    "results.nonstream.summary.latency.p50.gatewayMinusDirect.median",
    2,
    "≤ 0.8",
  ],
  [
    "non-streaming p90 added over direct (ms)",
    "results.nonstream.summary.latency.p90.gatewayMinusDirect.median",
    2,
    "",
  ],
  [
    "non-streaming p99 added over direct (ms)",
    "results.nonstream.summary.latency.p99.gatewayMinusDirect.median",
    2,
    "≤ 3",
  ],
  [
    "non-streaming p50 added over the bare proxy (ms)",
    "results.nonstream.summary.latency.p50.gatewayMinusProxy.median",
    2,
    "≤ ~0.3",
  ],
  ["bare proxy p50 added over direct (ms)", "results.nonstream.summary.latency.p50.proxyMinusDirect.median", 2, ""],
  ["streaming TTFB p50 added over direct (ms)", "results.stream.summary.ttfb.p50.gatewayMinusDirect.median", 2, "≤ 1"],
  ["streaming TTFB p99 added over direct (ms)", "results.stream.summary.ttfb.p99.gatewayMinusDirect.median", 2, ""],
  ["streaming total p50 added over direct (ms)", "results.stream.summary.total.p50.gatewayMinusDirect.median", 2, ""],
  [
    "streaming median gap between chunks, added (ms)",
    "results.stream.summary.medianChunkGap.p50.gatewayMinusDirect.median",
    2,
    "≈ 0",
  ],
  [
    "streaming longest gap (the held-back usage chunk), added (ms)",
    "results.stream.summary.maxChunkGap.p50.gatewayMinusDirect.median",
    2,
    "",
  ],
  ["saturation: bare proxy (req/s)", "results.saturation.rps.proxy.median", 0, ""],
  ["saturation: gateway, one account (req/s)", "results.saturation.rps.gateway.median", 0, ""],
  ["saturation: gateway ÷ proxy", "results.saturation.gatewayOverProxy.median", 3, "≥ 0.45"],
  ["saturation: gateway p99 ÷ proxy p99", "results.saturation.gatewayP99OverProxy.median", 2, "≤ 3"],
  ["saturation: gateway, several accounts (req/s)", "results.saturation.rps.gatewayAccounts.median", 0, ""],
  ["saturation: gateway, several accounts ÷ proxy", "results.saturation.gatewayAccountsOverProxy.median", 3, "≥ 0.30"],
  ["saturation: gateway CPU ms per request", "results.saturation.cpuMsPerRequest.gateway", 3, ""],
  ["non-streaming: gateway CPU ms per request at 200/s", "results.nonstream.cpuMsPerRequest.gateway", 3, ""],
  ["open streams: gateway RSS before (MiB)", "results.streams.gateway.beforeMiB", 1, ""],
  ["open streams: gateway RSS after the last round (MiB)", "", 1, "flat"],
  ["machine load average during the run", "meta.machineLoad.meanDuringRun", 2, ""],
];
const lastAfter = (r: any) => {
  const rounds = get(r, "results.streams.gateway.rounds");
  return rounds?.length ? rounds[rounds.length - 1].afterMiB : undefined;
};
const out = [
  `# Before / after`,
  "",
  `before: ${before.meta.label || a} (${before.meta.date}, commit ${before.meta.commit}); after: ${after.meta.label || b} (${after.meta.date}, commit ${after.meta.commit}).`,
  "Medians over repeats; see each file for the spread. The machine is shared: compare with its load in mind.",
  "",
  "| figure | before | after | target |",
  "|---|---|---|---|",
  ...rows.map(([name, path, d, target]) => {
    const x = path ? get(before, path) : lastAfter(before);
    const y = path ? get(after, path) : lastAfter(after);
    return `| ${name} | ${f(x, d)} | ${f(y, d)} | ${target} |`;
  }),
  "",
];
writeFileSync(join(dir, "compare.md"), out.join("\n"));
console.log(out.join("\n"));
