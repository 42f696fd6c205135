/** The markdown view of a results JSON (bench/results/<name>.md). */
import { issueTargets, peersTable } from "./report-peers";

type R = { median: number; min: number; max: number };
const f = (x: number | null | undefined, d = 2) =>
  x === null || x === undefined || !Number.isFinite(x) ? "–" : x.toFixed(d);
/** A robust value: median, with the spread over repeats when there were several. */
const rv = (r: R | undefined, d = 2) =>
  !r ? "–" : r.min === r.max ? f(r.median, d) : `${f(r.median, d)} (${f(r.min, d)}…${f(r.max, d)})`;
const mark = (ok: boolean) => (ok ? "✅" : "❌");

export function renderMarkdown(report: { meta: any; results: any }): string {
  const { meta, results } = report;
  const out: string[] = [];
  out.push(`# Gateway benchmark${meta.label ? ` — ${meta.label}` : ""}`);
  out.push("");
  out.push(
    `${meta.date} · commit ${meta.commit}${meta.dirty ? " (+ uncommitted src changes)" : ""} · Bun ${meta.bun} · ${meta.cores} × ${meta.cpu} · ${meta.durationSeconds} s`,
  );
  out.push(`Layout: ${meta.layout}. Options: ${JSON.stringify(meta.options)}.`);
  if (meta.ledger) out.push(`Gateway ledger settings: ${JSON.stringify(meta.ledger)}.`);
  if (meta.observability) {
    const o = meta.observability;
    out.push(
      `Gateway observability: LOG_LEVEL=${o.logLevel}, LOG_REQUESTS=${o.logRequests} (${o.requestLogLines} request lines written), traces ${o.otlpExports ? `exported (${o.otlpExports.exports} OTLP exports, ${o.otlpExports.bytes} bytes)` : "off"}.`,
    );
  }
  if (meta.machineLoad)
    out.push(
      `Machine load (1-min load average on ${meta.cores} cores; anything above ~2 means other work competed for the CPUs): at start ${f(meta.machineLoad.atStart)}, mean during the run ${f(meta.machineLoad.meanDuringRun)}, max ${f(meta.machineLoad.maxDuringRun)}.`,
    );
  out.push(
    "Values are medians over repeats, with (min…max) over repeats as the noise. *direct* = the simulator called directly; *proxy* = bare Bun fetch passthrough; *essentials* = Bun proxy doing key lookup, JSON parse and rewrite, usage extraction and an in-memory ledger; *portkey* = Portkey's gateway on Bun (when installed); *gateway* = full pipeline (key auth, rate limit, hold, settle, usage event on PostgreSQL).",
  );
  out.push("");

  const targets: string[] = issueTargets(results);
  const ol = (title: string, s: any, metrics: [string, string][]) => {
    out.push(`## ${title}`);
    out.push("");
    out.push(
      `Open loop at ${s.rate} req/s, ${s.seconds} s per target per repeat, ${s.repeats} repeats. Times in ms from the scheduled send.`,
    );
    out.push("");
    out.push(
      "| metric | direct | proxy | gateway | gateway − direct | gateway − proxy | proxy − direct | gateway ÷ direct |",
    );
    out.push("|---|---|---|---|---|---|---|---|");
    for (const [m, name] of metrics) {
      for (const p of ["p50", "p90", "p99"]) {
        const x = s.summary[m][p];
        out.push(
          `| ${name} ${p} | ${rv(x.direct)} | ${rv(x.proxy)} | ${rv(x.gateway)} | **${rv(x.gatewayMinusDirect)}** | ${rv(x.gatewayMinusProxy)} | ${rv(x.proxyMinusDirect)} | ${f(x.gatewayOverDirect, 3)} |`,
        );
      }
    }
    out.push("");
    out.push(
      `CPU per request (ms, target process only): proxy ${f(s.cpuMsPerRequest.proxy, 3)}, gateway ${f(s.cpuMsPerRequest.gateway, 3)}. Errors: ${JSON.stringify(s.errors)}. Prober send lag p99: ${f(s.proberSendLagP99Ms)} ms (the timer's own noise, the same for every target).`,
    );
    out.push("");
  };

  if (results.nonstream) {
    const s = results.nonstream;
    ol("Non-streaming chat (20 ms upstream)", s, [["latency", "latency"]]);
    const a = s.summary.latency;
    targets.push(
      `| non-streaming within ~0.3 ms of the proxy (p50) | ${f(a.p50.gatewayMinusProxy.median)} ms | ${mark(a.p50.gatewayMinusProxy.median <= 0.3)} |`,
    );
  }
  if (results.stream) {
    const s = results.stream;
    ol("Streaming chat (20 ms to the first chunk, 5 ms between chunks)", s, [
      ["ttfb", "time to first byte"],
      ["total", "total"],
      ["medianChunkGap", "median gap between reads (per-chunk delay)"],
      ["maxChunkGap", "longest gap between reads (the held-back usage chunk)"],
    ]);
    const gap = s.summary.medianChunkGap.p50.gatewayMinusDirect.median;
    targets.push(`| no per-chunk delay (median gap between reads, added p50) | ${f(gap)} ms | ${mark(gap <= 0.5)} |`);
  }
  if (results.messages) {
    const s = results.messages;
    ol(
      "Streaming Anthropic Messages to an Anthropic upstream (relayed; 20 ms to the first chunk, 5 ms between chunks)",
      s,
      [
        ["ttfb", "time to first byte"],
        ["total", "total"],
        ["medianChunkGap", "median gap between reads (per-chunk delay)"],
        ["maxChunkGap", "longest gap between reads (the held-back message_delta)"],
      ],
    );
    targets.push(
      `| Messages stream TTFB added p50 ≤ 1 ms | ${f(s.summary.ttfb.p50.gatewayMinusDirect.median)} ms | ${mark(s.summary.ttfb.p50.gatewayMinusDirect.median <= 1)} |`,
    );
  }
  if (results.saturation) {
    const s = results.saturation;
    out.push(`## Closed-loop saturation (wrk, ${s.connections} connections, instant upstream)`);
    out.push("");
    out.push(`${s.seconds} s per target per repeat, ${s.repeats} repeats.`);
    out.push("");
    out.push("| | direct | proxy | gateway | gateway ÷ proxy | gateway ÷ direct |");
    out.push("|---|---|---|---|---|---|");
    out.push(
      `| requests/s | ${rv(s.rps.direct, 0)} | ${rv(s.rps.proxy, 0)} | ${rv(s.rps.gateway, 0)} | **${rv(s.gatewayOverProxy, 3)}** | ${rv(s.gatewayOverDirect, 3)} |`,
    );
    out.push(
      `| latency p50 (ms) | ${rv(s.latencyP50Ms.direct)} | ${rv(s.latencyP50Ms.proxy)} | ${rv(s.latencyP50Ms.gateway)} | | |`,
    );
    out.push(
      `| latency p99 (ms) | ${rv(s.latencyP99Ms.direct)} | ${rv(s.latencyP99Ms.proxy)} | ${rv(s.latencyP99Ms.gateway)} | ${s.gatewayP99OverProxy ? `**${rv(s.gatewayP99OverProxy, 2)}**` : ""} | |`,
    );
    out.push(
      `| CPU ms per request (target process) | | ${f(s.cpuMsPerRequest.proxy, 3)} | ${f(s.cpuMsPerRequest.gateway, 3)} | | |`,
    );
    if (s.mainThreadMsPerRequest) {
      const m = s.mainThreadMsPerRequest;
      out.push(`| … of it on the JavaScript thread | | ${f(m.proxy, 3)} | ${f(m.gateway, 3)} | | |`);
      out.push(
        `| main-thread ceiling (1 ÷ that, requests/s) | | ${f(1000 / m.proxy, 0)} | ${f(1000 / m.gateway, 0)} | ${f(m.proxy / m.gateway, 3)} | |`,
      );
    }
    if (s.rps.gatewayAccounts) {
      out.push(
        `| gateway, ${s.accounts} accounts in round robin: requests/s | | | ${rv(s.rps.gatewayAccounts, 0)} | ${rv(s.gatewayAccountsOverProxy, 3)} | |`,
      );
      out.push(
        `| gateway, ${s.accounts} accounts: CPU ms per request | | | ${f(s.cpuMsPerRequest.gatewayAccounts, 3)} | | |`,
      );
    }
    out.push("");
    out.push(`Errors (connect/read/write/non-2xx/timeout, summed): ${JSON.stringify(s.errors)}.`);
    out.push("");
    targets.push(
      `| saturated throughput ≥ 45 % of the bare proxy (one account, ${s.connections} connections) | ${f(s.gatewayOverProxy.median * 100, 1)} % | ${mark(s.gatewayOverProxy.median >= 0.45)} |`,
    );
    if (s.gatewayAccountsOverProxy)
      targets.push(
        `| … with ${s.accounts} accounts in round robin | ${f(s.gatewayAccountsOverProxy.median * 100, 1)} % | ${mark(s.gatewayAccountsOverProxy.median >= 0.45)} |`,
      );
    if (s.gatewayP99OverProxy)
      targets.push(
        `| saturated p99 ≤ 3 × the bare proxy's (${s.connections} connections) | ${f(s.gatewayP99OverProxy.median, 2)} × | ${mark(s.gatewayP99OverProxy.median <= 3)} |`,
      );
  }
  if (results.sweep) {
    const s = results.sweep;
    out.push(`## Concurrency sweep (wrk, instant upstream, ${s.seconds} s each, one run)`);
    out.push("");
    out.push(
      "| connections | direct req/s | proxy req/s | gateway req/s | gateway ÷ proxy | direct p99 ms | proxy p99 ms | gateway p99 ms |",
    );
    out.push("|---|---|---|---|---|---|---|---|");
    for (const row of s.rows) {
      const b = row.byTarget;
      out.push(
        `| ${row.connections} | ${f(b.direct.rps, 0)} | ${f(b.proxy.rps, 0)} | ${f(b.gateway.rps, 0)} | ${f(b.gateway.rps / b.proxy.rps, 3)} | ${f(b.direct.latencyMs.p99)} | ${f(b.proxy.latencyMs.p99)} | ${f(b.gateway.latencyMs.p99)} |`,
      );
    }
    out.push("");
  }
  if (results.streams) {
    out.push("## Concurrent open streams (RSS of the target process, MiB)");
    out.push("");
    out.push(
      "Before and after each round: the RSS the target keeps, read after a full collection in it (its heap probe, bench/lib/heap-probe.ts); peak: the most sampled during the round.",
    );
    out.push("");
    const nr = Math.max(...Object.values<any>(results.streams).map((s) => s.rounds.length));
    out.push(
      "| target | streams | before | " +
        Array.from({ length: nr }, (_, i) => `round ${i + 1} peak / after`).join(" | ") +
        " | completed |",
    );
    out.push("|---|---|---|" + "---|".repeat(nr) + "---|");
    for (const [name, s] of Object.entries<any>(results.streams)) {
      const cells = Array.from(
        { length: nr },
        (_, i) => `${f(s.rounds[i]?.peakMiB, 1)} / ${f(s.rounds[i]?.afterMiB, 1)}`,
      ).join(" | ");
      out.push(
        `| ${name} | ${s.streams} | ${f(s.beforeMiB, 1)} | ${cells} | ${s.rounds.map((r: any) => `${r.ok}/${s.streams}`).join(", ")} |`,
      );
    }
    out.push("");
    const g = results.streams.gateway;
    const n = g?.rounds?.length ?? 0;
    if (n >= 3) {
      // Round 1 warms the heap. Flat = no growth: no later round ends more than 10 MiB above
      // round 2 (a round ending lower is the collector giving memory back, not a leak; the
      // plain spread is shown too).
      const after = g.rounds.slice(1).map((r: any) => r.afterMiB);
      const growth = Math.max(...after) - after[0];
      const spread = Math.max(...after) - Math.min(...after);
      targets.push(
        `| memory flat over the streams scenario (growth of the RSS kept after rounds 3–${n} over round 2, each after a full collection; spread ${f(spread, 1)} MiB) | ${f(growth, 1)} MiB | ${mark(growth <= 10 && g.rounds.every((r: any) => r.ok === g.streams))} |`,
      );
    }
  }
  if (results.memory) {
    const m = results.memory;
    out.push("## Memory of the default path (bench/memory.ts)");
    out.push("");
    out.push(
      `${m.command} in demo mode on embedded PGlite: a fresh DATA_DIR, then a restart on it; ${m.calls} chat calls each (a third streamed), then ${m.idleSeconds} s idle. RSS of the gateway process tree, MiB; steady = median of the last 3 s.`,
    );
    out.push("");
    out.push("| start | ready | peak | at ready | after the calls | steady | calls ok |");
    out.push("|---|---|---|---|---|---|---|");
    for (const [name, s] of [
      ["first start", m.first],
      ["restart", m.restart],
    ] as const) {
      out.push(
        `| ${name} | ${f(s.readyMs / 1000, 1)} s | ${f(s.peakMiB, 0)} | ${f(s.atReadyMiB, 0)} | ${f(s.afterCallsMiB, 0)} | ${f(s.steadyMiB, 0)} | ${s.ok}/${m.calls} |`,
      );
    }
    out.push("");
    const worstPeak = Math.max(m.first.peakMiB, m.restart.peakMiB);
    const worstSteady = Math.max(m.first.steadyMiB, m.restart.steadyMiB);
    const allOk = m.first.ok === m.calls && m.restart.ok === m.calls;
    targets.push(
      `| PGlite default path: peak RSS ≤ 500 MiB (first start and restart, the larger) | ${f(worstPeak, 0)} MiB | ${mark(worstPeak <= 500 && allOk)} |`,
    );
    targets.push(
      `| … steady RSS ≤ 300 MiB after ${m.calls} calls (the larger) | ${f(worstSteady, 0)} MiB | ${mark(worstSteady <= 300 && allOk)} |`,
    );
  }
  if (results.stats) {
    const s = results.stats;
    out.push("## Stats endpoints (bench/stats.ts)");
    out.push("");
    if (s.note) out.push(s.note);
    else {
      out.push(
        `${s.events.toLocaleString("en")} usage events loaded in ${f(s.load_ms / 1000, 1)} s; rollup ${s.rollup.events_per_s.toLocaleString("en")} events/s; folding 1,000 new events ${f(s.incremental_1000_ms.p50)} ms. ${s.requests} sequential requests per endpoint over HTTP, ms:`,
      );
      out.push("");
      out.push("| endpoint | as deployed p50 | p90 | p99 | cache off p50 | p90 | p99 |");
      out.push("|---|---|---|---|---|---|---|");
      let worst = 0;
      for (const [ep, v] of Object.entries<any>(s.latency_ms)) {
        out.push(
          `| \`${ep}\` | ${f(v.cached.p50)} | ${f(v.cached.p90)} | ${f(v.cached.p99)} | ${f(v.uncached.p50)} | ${f(v.uncached.p90)} | ${f(v.uncached.p99)} |`,
        );
        worst = Math.max(worst, v.cached.p50);
        s.worstUncachedP50 = Math.max(s.worstUncachedP50 ?? 0, v.uncached.p50);
      }
      targets.push(
        `| stats endpoints ≤ 10 ms p50 at a million events (slowest endpoint, as deployed) | ${f(worst)} ms | ${mark(worst <= 10)} |`,
      );
      targets.push(
        `| … with the per-process cache off (slowest endpoint) | ${f(s.worstUncachedP50)} ms | ${mark(s.worstUncachedP50 <= 10)} |`,
      );
    }
    out.push("");
  }
  if (targets.length) {
    const at = out.findIndex((l) => l.startsWith("Values are medians")) + 2;
    out.splice(at, 0, "## Targets", "", "| target | measured | met |", "|---|---|---|", ...targets, "");
  }
  const peers = peersTable(results);
  if (peers.length) out.splice(out.findIndex((l) => l.startsWith("Values are medians")) + 2, 0, ...peers);
  return out.join("\n") + "\n";
}
