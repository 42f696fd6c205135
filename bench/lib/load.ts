/**
 * Load generators. The open-loop probers send on a fixed schedule whatever the target does
 * and time each request from its *scheduled* send time, so a slow response delays nobody's
 * clock (no coordinated omission). Closed-loop saturation is wrk's job (C, Debian package).
 */
import { writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { taskset } from "./procs";

export interface Target {
  /** direct, proxy, essentials, portkey, gateway (bench/lib/peers.ts). */
  name: string;
  /** Full URL of the endpoint (chat completions, or Anthropic Messages). */
  url: string;
  /** What a complete stream ends with: `[DONE]` (OpenAI's, the default) or `message_stop` (Anthropic's). */
  end?: string;
  /** Headers every request carries besides the body's and the key's (Portkey's provider and upstream). */
  headers?: Record<string, string>;
}

export interface OpenLoopResult {
  sent: number;
  ok: number;
  errors: number;
  /** ms from scheduled send to the end of the body. */
  latency: number[];
  /** ms from scheduled send to the first body byte (streams). */
  ttfb: number[];
  /** Longest pause between two body reads of one stream, ms (streams): the gateway holds the usage chunk back until the upstream's [DONE]. */
  maxGap: number[];
  /** Median pause between two body reads of one stream, ms (streams): the per-chunk delay. */
  medianGap: number[];
  /** How late the timer actually fired, ms (the prober's own noise). */
  sendLag: number[];
  firstError?: string;
}

const enc = new TextEncoder();

function endsWithDone(tail: Uint8Array, DONE: Uint8Array): boolean {
  outer: for (let i = tail.length - DONE.length; i >= 0; i--) {
    for (let j = 0; j < DONE.length; j++) if (tail[i + j] !== DONE[j]) continue outer;
    return true;
  }
  return false;
}

/**
 * Fires `rate` requests per second for `durationMs`; each request is timed from its slot.
 * With `stream`, the body is read chunk by chunk and a stream counts as ok only if it ended
 * with `[DONE]`.
 */
export async function openLoop(
  t: Target,
  o: { rate: number; durationMs: number; body: string; token: string; stream: boolean },
): Promise<OpenLoopResult> {
  const r: OpenLoopResult = {
    sent: 0,
    ok: 0,
    errors: 0,
    latency: [],
    ttfb: [],
    maxGap: [],
    medianGap: [],
    sendLag: [],
  };
  // Anthropic's headers too: the simulator's Messages endpoint asks for them (the gateway takes the bearer).
  const headers = {
    "content-type": "application/json",
    authorization: `Bearer ${o.token}`,
    "x-api-key": o.token,
    "anthropic-version": "2023-06-01",
    ...t.headers,
  };
  const end = enc.encode(t.end ?? "[DONE]");
  const interval = 1000 / o.rate;
  const total = Math.round((o.durationMs / 1000) * o.rate);
  const inflight: Promise<void>[] = [];
  const fail = (why: string) => {
    r.errors++;
    r.firstError ??= why;
  };
  const one = async (slot: number) => {
    try {
      const res = await fetch(t.url, { method: "POST", headers, body: o.body });
      if (res.status !== 200) {
        fail(`${res.status} ${(await res.text()).slice(0, 300)}`);
        return;
      }
      if (!o.stream) {
        await res.arrayBuffer();
        r.latency.push(performance.now() - slot);
        r.ok++;
        return;
      }
      const reader = res.body!.getReader();
      let first = -1;
      let last = 0;
      let gap = 0;
      const gaps: number[] = [];
      let tail = new Uint8Array(0);
      for (;;) {
        const { done, value } = await reader.read();
        const now = performance.now();
        if (done) break;
        if (first < 0) first = now;
        else {
          gap = Math.max(gap, now - last);
          gaps.push(now - last);
        }
        last = now;
        tail = value.length >= 32 ? value.subarray(value.length - 32) : value;
      }
      if (first < 0 || !endsWithDone(tail, end)) {
        fail(`stream ended without ${t.end ?? "[DONE]"}`);
        return;
      }
      r.ttfb.push(first - slot);
      r.latency.push(last - slot);
      r.maxGap.push(gap);
      gaps.sort((a, b) => a - b);
      if (gaps.length) r.medianGap.push(gaps[Math.floor((gaps.length - 1) / 2)]!);
      r.ok++;
    } catch (e) {
      fail(e instanceof Error ? e.message : String(e));
    }
  };
  const t0 = performance.now() + 5;
  let i = 0;
  while (i < total) {
    const now = performance.now();
    while (i < total && t0 + i * interval <= now) {
      const slot = t0 + i * interval;
      r.sendLag.push(now - slot);
      r.sent++;
      inflight.push(one(slot));
      i++;
    }
    if (i < total) await Bun.sleep(Math.max(0, t0 + i * interval - performance.now()));
  }
  await Promise.all(inflight);
  return r;
}

export interface WrkResult {
  rps: number;
  requests: number;
  errors: number;
  latencyMs: { p50: number; p90: number; p99: number; max: number; mean: number };
}

/** Closed loop: wrk with `connections` keep-alive connections for `seconds`, on `core`. */
export async function wrk(
  t: Target,
  o: { connections: number; seconds: number; body: string; token: string | string[]; core: number | null },
): Promise<WrkResult> {
  const bodyFile = join(tmpdir(), `bench-body-${process.pid}.json`);
  writeFileSync(bodyFile, o.body);
  const script = join(import.meta.dir, "..", "post.lua");
  const threads = Math.min(2, o.connections);
  const cmd = [
    "wrk",
    `-t${threads}`,
    `-c${o.connections}`,
    `-d${o.seconds}s`,
    "--timeout",
    "10s",
    ...Object.entries(t.headers ?? {}).flatMap(([k, v]) => ["-H", `${k}: ${v}`]),
    "-s",
    script,
    t.url,
    "--",
    bodyFile,
    ...(Array.isArray(o.token) ? o.token : [o.token]),
  ];
  const ts = taskset();
  const argv = o.core !== null && ts ? [ts, "-c", String(o.core), ...cmd] : cmd;
  const p = Bun.spawn(argv, { stdout: "pipe", stderr: "pipe" });
  const [out, err] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text()]);
  await p.exited;
  const line = out.split("\n").find((l) => l.startsWith("WRKJSON "));
  if (!line) throw new Error(`wrk printed no summary (exit ${p.exitCode}):\n${out}\n${err}`);
  const j = JSON.parse(line.slice(8));
  const e = j.errors;
  const us = j.latency_us;
  return {
    rps: j.requests / (j.duration_us / 1e6),
    requests: j.requests,
    errors: e.connect + e.read + e.write + e.status + e.timeout,
    latencyMs: { p50: us.p50 / 1000, p90: us.p90 / 1000, p99: us.p99 / 1000, max: us.max / 1000, mean: us.mean / 1000 },
  };
}

/**
 * Opens `n` streams at once (each lasting a few seconds) and reads them to the end; returns
 * how many ended with [DONE], and calls `sample` every 200 ms while they are open.
 */
export async function openStreams(
  t: Target,
  o: { n: number; body: string; token: string; sample: () => void },
): Promise<{ ok: number; errors: number; firstError?: string; ms: number }> {
  const headers = { "content-type": "application/json", authorization: `Bearer ${o.token}`, ...t.headers };
  let ok = 0;
  let errors = 0;
  let firstError: string | undefined;
  const start = performance.now();
  const timer = setInterval(o.sample, 200);
  await Promise.all(
    Array.from({ length: o.n }, async () => {
      try {
        const res = await fetch(t.url, { method: "POST", headers, body: o.body });
        const text = await res.text();
        if (res.status === 200 && text.includes("[DONE]")) ok++;
        else {
          errors++;
          firstError ??= `${res.status} ${text.slice(0, 200)}`;
        }
      } catch (e) {
        errors++;
        firstError ??= e instanceof Error ? e.message : String(e);
      }
    }),
  );
  clearInterval(timer);
  return { ok, errors, firstError, ms: performance.now() - start };
}
