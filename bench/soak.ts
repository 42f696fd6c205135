/**
 * Soak run: a steady request mix at a fixed rate for a long time, with `--streams` (500)
 * streams open at every moment, against a real gateway process on a fresh PostgreSQL database
 * (bench/lib/stack.ts). Reports the gateway's RSS at the start (after a warm-up) and the end,
 * latency percentiles per kind, the answers by outcome, and errors beyond the injected ones;
 * afterwards the books are checked for open holds.
 *
 *   bun bench/soak.ts                 # 10 minutes (the local run)
 *   bun bench/soak.ts --seconds=60    # any length; --ci is 25 s
 *   flags: --streams=500 --rate=40 (JSON calls per second) --accounts=8 --pg=URL --out=NAME
 *
 * The mix: JSON calls at `rate`/s (85 % plain, 10 % a 503 the retry absorbs, 5 % a 503 every
 * attempt gets: an injected 502), and a closed pool of streams of ~3 s each (95 % plain, 5 %
 * cut by the upstream mid-stream: an injected upstream_error event).
 * The CI variant (test/reliability/soak.test.ts) runs the same code for SOAK_SECONDS (60).
 */
import { writeFileSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import postgres from "postgres";
import { rssMiB } from "./lib/procs";
import { checkPostgres, startStack } from "./lib/stack";
import { dist, type Dist } from "./lib/summary";

export interface SoakOptions {
  seconds: number;
  streams: number;
  /** JSON calls per second. */
  rate: number;
  accounts: number;
  pg: string;
  /** Progress lines while running. */
  log?: (line: string) => void;
}

export interface SoakReport {
  seconds: number;
  streams: number;
  rate: number;
  requests: number;
  outcomes: Record<string, number>;
  unexpected: number;
  unexpectedSamples: string[];
  latencyMs: { json: Dist; streamFirstByte: Dist; streamTotal: Dist };
  rssMiB: { start: number | null; end: number | null; max: number | null; samples: number[] };
  openHoldsAfter: number;
  maxConcurrentStreams: number;
}

const MODELS = ["gpt-4o-mini", "claude-haiku-4-5", "deepseek-v4-flash", "gemini-3.5-flash"];

export async function runSoak(o: SoakOptions): Promise<SoakReport> {
  await checkPostgres(o.pg);
  // Circuit breaking off: each call's expected status assumes it reaches the simulator, and the
  // failing share of one model's calls (up to ~43 %) sits close to the default threshold.
  const stack = await startStack({
    serverUrl: o.pg,
    targetCore: null,
    loadCore: null,
    gatewayBunFlags: [],
    gatewayEnv: { STATS_ROLLUP_INTERVAL_MS: "0", RATE_LIMIT_RPM: "0", CIRCUIT_BREAKER: "off" },
    accounts: o.accounts,
  });
  const log = o.log ?? (() => {});
  const url = `${stack.gatewayUrl}/v1/chat/completions`;
  const outcomes: Record<string, number> = {};
  const unexpectedSamples: string[] = [];
  let unexpected = 0;
  const json: number[] = [];
  const ttfb: number[] = [];
  const total: number[] = [];
  let i = 0;
  const count = (k: string, ok: boolean, detail = "") => {
    outcomes[k] = (outcomes[k] ?? 0) + 1;
    if (!ok) {
      unexpected++;
      if (unexpectedSamples.length < 10) unexpectedSamples.push(`${k} ${detail}`.slice(0, 300));
    }
  };
  const token = () => stack.tokens[i % stack.tokens.length]!;
  const post = (body: unknown, signal?: AbortSignal) =>
    fetch(url, {
      method: "POST",
      headers: { authorization: `Bearer ${token()}`, "content-type": "application/json" },
      body: JSON.stringify(body),
      signal,
    });

  let stop = false;
  let open = 0;
  let maxOpen = 0;

  async function oneJson(): Promise<void> {
    const n = i++;
    const r = n % 20;
    const fault = r < 17 ? "" : r < 19 ? "[sim:fail=503x1]" : "[sim:fail=503]";
    const expected = fault === "[sim:fail=503]" ? 502 : 200;
    const t = performance.now();
    try {
      const res = await post({
        model: MODELS[n % MODELS.length],
        max_tokens: 30,
        messages: [{ role: "user", content: `soak json ${n} ${crypto.randomUUID()} ${fault}` }],
      });
      const text = await res.text();
      if (res.status === 200) json.push(performance.now() - t);
      count(`json ${fault || "plain"} ${res.status}`, res.status === expected, text);
    } catch (e) {
      count(`json ${fault || "plain"} network error`, false, String(e));
    }
  }

  async function oneStream(): Promise<void> {
    const n = i++;
    const drop = n % 20 === 0;
    const t = performance.now();
    open++;
    maxOpen = Math.max(maxOpen, open);
    try {
      const res = await post({
        model: MODELS[n % MODELS.length],
        stream: true,
        max_tokens: 60,
        messages: [
          {
            role: "user",
            content: `soak stream ${n} [sim:tokens=30] [sim:chunk_ms=100]${drop ? " [sim:drop=5]" : ""}`,
          },
        ],
      });
      const reader = res.body!.getReader();
      let first = true;
      let text = "";
      const dec = new TextDecoder();
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        if (first) {
          ttfb.push(performance.now() - t);
          first = false;
        }
        text += dec.decode(value, { stream: true });
      }
      total.push(performance.now() - t);
      const ended = text.includes("data: [DONE]");
      const failed = text.includes('"upstream_error"');
      const kind = drop ? "stream drop" : "stream plain";
      count(
        `${kind} ${res.status}${failed ? " upstream_error" : ended ? " done" : " cut"}`,
        res.status === 200 && ended && failed === drop,
        text.slice(-200),
      );
    } catch (e) {
      count(`stream ${drop ? "drop" : "plain"} network error`, false, String(e));
    } finally {
      open--;
    }
  }

  // RSS of the gateway process, once a second.
  const rss: number[] = [];
  const sampler = setInterval(() => {
    const m = rssMiB(stack.gateway.pid);
    if (m !== null) rss.push(m);
  }, 1000);

  const t0 = performance.now();
  const durationMs = o.seconds * 1000;
  const warmupMs = Math.min(10_000, durationMs * 0.2);
  let rssStart: number | null = null;
  const warm = setTimeout(() => (rssStart = rssMiB(stack.gateway.pid)), warmupMs);
  const streamWorkers = Array.from({ length: o.streams }, async (_, k) => {
    await Bun.sleep((k * 3000) / o.streams); // ramp up over one stream's length
    while (!stop) await oneStream();
  });
  const inflight = new Set<Promise<void>>();
  const jsonLoop = (async () => {
    const gap = 1000 / o.rate;
    let next = performance.now();
    while (performance.now() - t0 < durationMs) {
      const p = oneJson().finally(() => inflight.delete(p));
      inflight.add(p);
      next += gap;
      const wait = next - performance.now();
      if (wait > 0) await Bun.sleep(wait);
    }
  })();
  const progress = setInterval(
    () =>
      log(
        `[soak] ${Math.round((performance.now() - t0) / 1000)} s: ${i} requests, ${open} streams open, RSS ${rss.at(-1) ?? "?"} MiB, unexpected ${unexpected}`,
      ),
    10_000,
  );

  await jsonLoop;
  const rssEnd = rssMiB(stack.gateway.pid);
  stop = true;
  await Promise.all(streamWorkers);
  await Promise.all(inflight);
  clearInterval(progress);
  clearInterval(sampler);
  clearTimeout(warm);

  // Every call has ended: nothing may be held any more.
  await Bun.sleep(500);
  const sql = postgres(stack.dbUrl, { max: 1, onnotice: () => {} });
  const [h] = await sql`select count(*)::int as n from holds where status = 'open'`;
  await sql.end();
  await stack.stop();

  return {
    seconds: o.seconds,
    streams: o.streams,
    rate: o.rate,
    requests: i,
    outcomes: Object.fromEntries(Object.entries(outcomes).sort()),
    unexpected,
    unexpectedSamples,
    latencyMs: { json: dist(json), streamFirstByte: dist(ttfb), streamTotal: dist(total) },
    rssMiB: {
      start: rssStart,
      end: rssEnd,
      max: rss.length ? Math.max(...rss) : null,
      samples: rss.filter((_, k) => k % 10 === 0).map((x) => Math.round(x)),
    },
    openHoldsAfter: h!.n as number,
    maxConcurrentStreams: maxOpen,
  };
}

export function soakMarkdown(r: SoakReport): string {
  const ms = (v: number) => Math.round(v);
  const d = (x: Dist) => `p50 ${ms(x.p50)} · p90 ${ms(x.p90)} · p99 ${ms(x.p99)} · max ${ms(x.max)} (n=${x.n})`;
  return [
    `# Soak: ${r.seconds} s, ${r.streams} concurrent streams, ${r.rate} JSON calls/s`,
    "",
    `- requests: ${r.requests}; most streams open at once: ${r.maxConcurrentStreams}`,
    `- gateway RSS: start ${r.rssMiB.start} MiB (after warm-up), end ${r.rssMiB.end} MiB, max ${r.rssMiB.max} MiB`,
    `- JSON latency (ms): ${d(r.latencyMs.json)}`,
    `- stream first byte (ms): ${d(r.latencyMs.streamFirstByte)}`,
    `- stream total (ms): ${d(r.latencyMs.streamTotal)}`,
    `- errors beyond the injected ones: ${r.unexpected}${r.unexpectedSamples.length ? ` (${r.unexpectedSamples.join("; ")})` : ""}`,
    `- open holds after the run: ${r.openHoldsAfter}`,
    `- outcomes: ${Object.entries(r.outcomes)
      .map(([k, v]) => `${k}: ${v}`)
      .join(", ")}`,
    "",
  ].join("\n");
}

if (import.meta.main) {
  const flag = (name: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.split("=")[1];
  const seconds = process.argv.includes("--ci") ? 25 : Number(flag("seconds") ?? 600);
  const report = await runSoak({
    seconds,
    streams: Number(flag("streams") ?? 500),
    rate: Number(flag("rate") ?? 40),
    accounts: Number(flag("accounts") ?? 8),
    pg: flag("pg") ?? process.env.BENCH_PG_URL ?? "postgres://postgres@127.0.0.1:5432/postgres",
    log: (l) => console.log(l),
  });
  const md = soakMarkdown(report);
  console.log(md);
  const out = join(import.meta.dir, "results");
  mkdirSync(out, { recursive: true });
  const name = flag("out") ?? `soak-${seconds}s`;
  writeFileSync(join(out, `${name}.json`), JSON.stringify(report, null, 2) + "\n");
  writeFileSync(join(out, `${name}.md`), md);
  process.exit(report.unexpected === 0 && report.openHoldsAfter === 0 ? 0 : 1);
}
