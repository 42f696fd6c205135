/**
 * KiB allocated per call, for the bare proxy, the essentials proxy, Portkey on Bun (when
 * installed) and the gateway: each runs with JavaScriptCore's collector off and a heap probe
 * preloaded (lib/heap-probe.ts), wrk drives saturated JSON calls at it, and the heap's capacity
 * growth over a window divided by the calls answered in it is what one call allocates. The GC
 * log's reading (lib/gc-log.ts) is only an upper bound; this is the figure of issue 30's point 2.
 *
 *   ./node_modules/.bin/bun bench/alloc.ts [--portkey=DIR] [--seconds=3] [--repeats=3] [--only=gateway,…] [--env=K=V,…] [--stream] [--refused=key|body] [--json=FILE]
 *
 * `--refused` measures what a refused call costs instead: `key`, a well-formed API key that
 * does not exist (401; past INVALID_KEY_RATE_PER_IP the address gets 429 first, so raise it
 * with --env to measure the 401 itself); `body`, a valid key with a body its schema refuses (400).
 *
 * `npm run bench` runs it as its `alloc` scenario, on a stack of its own before the main one
 * starts: with no collection a target's memory only grows, so each is stopped once measured.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { heapReading, typesPerCall } from "./lib/heap-probe";
import { wrk } from "./lib/load";
import { startPeers, type Peer } from "./lib/peers";
import { startStack } from "./lib/stack";
import { robust, type Robust } from "./lib/summary";
import { INSTANT_BODY, INSTANT_STREAM_BODY, withPeers } from "./lib/targets";

export interface AllocOptions {
  serverUrl: string;
  portkeyDir: string | undefined;
  /** Seconds of each measured window (after a warm-up of 2 s). */
  seconds: number;
  repeats: number;
  connections: number;
  /** Measure only these targets (all when absent). */
  only?: string[];
  /** Streamed calls (SSE) instead of JSON ones. */
  stream?: boolean;
  /** Extra environment of the gateway, to measure with a feature off (`--env=LOG_REQUESTS=false,…`). */
  gatewayEnv?: Record<string, string>;
  /** Refused calls instead of answered ones: an unknown key (`key`) or a body the schema refuses (`body`). */
  refused?: "key" | "body";
}

/** A well-formed API key no account has. */
const UNKNOWN_KEY = `sk-gw-${"0".repeat(48)}`;
/** A chat body its schema refuses (no messages). */
const REFUSED_BODY = JSON.stringify({ model: "openai/gpt-4o-mini", max_tokens: 16 });

export interface AllocResult
  extends Omit<AllocOptions, "serverUrl" | "portkeyDir" | "only" | "gatewayEnv" | "stream" | "refused"> {
  targets: string[];
  /** KiB of heap capacity grown per answered call, per window: median (min…max). */
  kibPerCall: Record<string, Robust>;
  /** Objects of each kind made per call over all windows, most numerous first (lib/heap-probe.ts). */
  typesPerCall: Record<string, [string, number][]>;
  requests: Record<string, number>;
  errors: Record<string, number>;
}

export async function allocScenario(o: AllocOptions, log: (...a: unknown[]) => void): Promise<AllocResult> {
  log(
    `alloc: every target with the collector off, ${o.repeats} × ${o.seconds} s of saturated ${o.stream ? "SSE" : "JSON"} each`,
  );
  const stack = await startStack({
    serverUrl: o.serverUrl,
    targetCore: null,
    loadCore: null,
    gatewayBunFlags: [],
    gatewayEnv: o.gatewayEnv ?? {},
    collectorOff: true,
  });
  const probeDir = mkdtempSync(`${tmpdir()}/bench-heap-`);
  const result: AllocResult = {
    seconds: o.seconds,
    repeats: o.repeats,
    connections: o.connections,
    targets: [],
    kibPerCall: {},
    typesPerCall: {},
    requests: {},
    errors: {},
  };
  let peers: Peer[] = [];
  try {
    peers = await startPeers({
      simUrl: stack.simUrl,
      tokens: stack.tokens,
      core: null,
      portkeyDir: o.portkeyDir,
      log,
      heapProbeDir: probeDir,
    });
    const probes: Record<string, { pid: number; file: string; stop: () => Promise<void> }> = {
      proxy: { pid: stack.proxy.pid, file: stack.heapProbes!.proxy, stop: () => stack.proxy.stop() },
      gateway: { pid: stack.gateway.pid, file: stack.heapProbes!.gateway, stop: async () => {} },
      ...Object.fromEntries(
        peers.map((p) => [p.name, { pid: p.child.pid, file: p.heapProbe!, stop: () => p.child.stop() }]),
      ),
    };
    for (const t of withPeers(stack, peers).filter(
      (x) => x.name !== "direct" && (!o.only || o.only.includes(x.name)),
    )) {
      const probe = probes[t.name]!;
      const drive = (seconds: number) =>
        wrk(t, {
          connections: o.connections,
          seconds,
          body: o.refused === "body" ? REFUSED_BODY : o.stream ? INSTANT_STREAM_BODY : INSTANT_BODY,
          token: o.refused === "key" ? UNKNOWN_KEY : stack.token,
          core: null,
        });
      await drive(2); // connections open, code compiled: what is left is each call's own
      const perWindow: number[] = [];
      let [requests, errors] = [0, 0];
      const first = await heapReading(probe.pid, probe.file);
      let after = first;
      for (let i = 0; i < o.repeats; i++) {
        const before = after;
        const r = await drive(o.seconds);
        after = await heapReading(probe.pid, probe.file);
        perWindow.push((after.capacity - before.capacity) / 1024 / r.requests);
        requests += r.requests;
        errors += r.errors;
      }
      await probe.stop(); // its heap only grows
      result.targets.push(t.name);
      result.kibPerCall[t.name] = robust(perWindow);
      result.typesPerCall[t.name] = typesPerCall(first, after, requests);
      result.requests[t.name] = requests;
      result.errors[t.name] = errors;
      log(
        `alloc ${t.name}: ${perWindow.map((x) => x.toFixed(1)).join(", ")} KiB/call (${requests} calls, ${errors} errors);`,
        result.typesPerCall[t.name]!.map(([k, n]) => `${k} ${n.toFixed(1)}`).join(", "),
      );
    }
  } finally {
    for (const p of peers) await p.child.stop();
    await stack.stop();
    rmSync(probeDir, { recursive: true, force: true });
  }
  return result;
}

if (import.meta.main) {
  const arg = (name: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
  const r = await allocScenario(
    {
      serverUrl: arg("pg") ?? process.env.BENCH_PG_URL ?? "postgres://postgres@127.0.0.1:5432/postgres",
      portkeyDir: arg("portkey") ?? process.env.BENCH_PORTKEY_DIR,
      seconds: Number(arg("seconds") ?? 3),
      repeats: Number(arg("repeats") ?? 3),
      connections: Number(arg("conns") ?? 64),
      only: arg("only")?.split(","),
      stream: process.argv.includes("--stream"),
      refused: arg("refused") as AllocOptions["refused"],
      gatewayEnv: Object.fromEntries((arg("env")?.split(",") ?? []).map((kv) => kv.split("=", 2) as [string, string])),
    },
    (...a) => console.log(...a),
  );
  const json = arg("json");
  if (json) writeFileSync(json, JSON.stringify(r, null, 2));
  else console.log(JSON.stringify(r.kibPerCall, null, 2));
}
