/**
 * One circuit breaker as a pure state machine: no clock, no I/O, no mutation. Every function
 * takes the circuit and the time and returns the next circuit, so the tracker (tracker.ts)
 * owns the maps and the clock, and the rules here can be property-tested in isolation.
 *
 * closed: calls pass; outcomes go into a sliding window of `buckets` time slices. Once the
 * window holds at least `minCalls` outcomes and the failed share reaches `failureRatio`, the
 * circuit opens. open: every call is refused until `coolDownMs` has passed. half_open: up to
 * `probes` calls pass at a time; that many successes close the circuit (with an empty window),
 * one failure opens it again for another cool-down.
 *
 * Accounts (issue 28 #5): a window also keeps the accounts that called and those that failed
 * (up to `minAccounts` of each). It opens only when the failures come from at least
 * min(`minAccounts`, accounts that called) distinct accounts: where several tenants use a
 * provider, one tenant's failures (its own requests timing out) never open it for the others,
 * while a provider only one tenant uses still opens on that tenant's failures. A failure without
 * an account (none known) counts as an account of its own.
 */
export type CircuitState = "closed" | "half_open" | "open";

export interface BreakerSettings {
  windowMs: number;
  /** Outcomes the window needs before it may open the circuit. */
  minCalls: number;
  /** Failed share (0–1] of the window's outcomes that opens the circuit. */
  failureRatio: number;
  coolDownMs: number;
  /** Probe calls let through at once in half_open, and the successes that close it. */
  probes: number;
  /** Distinct failing accounts that may open a circuit (fewer when fewer accounts called); 1 = any. */
  minAccounts?: number;
}

export const BUCKETS = 10;

export interface Bucket {
  /** The slice's index: floor(time / (windowMs / BUCKETS)). */
  slot: number;
  ok: number;
  failed: number;
  /** Accounts that called in this slice, and those that failed (each at most minAccounts). */
  callers?: readonly string[];
  failing?: readonly string[];
}

export interface Circuit {
  state: CircuitState;
  /** Closed: the window's slices, oldest first. */
  window: readonly Bucket[];
  /** Open: when the cool-down ends. */
  until: number;
  /** Half-open: probes let through and not yet reported; successes so far; when the last one left. */
  probing: number;
  probeOk: number;
  probeAt: number;
}

export const CLOSED: Circuit = { state: "closed", window: [], until: 0, probing: 0, probeOk: 0, probeAt: 0 };

const slotOf = (now: number, s: BreakerSettings) => Math.floor(now / Math.max(1, s.windowMs / BUCKETS));

/** The window without the slices older than `windowMs`. */
function fresh(window: readonly Bucket[], now: number, s: BreakerSettings): readonly Bucket[] {
  const oldest = slotOf(now, s) - BUCKETS + 1;
  return window[0] && window[0].slot < oldest ? window.filter((b) => b.slot >= oldest) : window;
}

export function totals(
  c: Circuit,
  now: number,
  s: BreakerSettings,
): { ok: number; failed: number; callers: number; failing: number } {
  let ok = 0;
  let failed = 0;
  const callers = new Set<string>();
  const failing = new Set<string>();
  for (const b of fresh(c.window, now, s)) {
    ok += b.ok;
    failed += b.failed;
    for (const a of b.callers ?? []) callers.add(a);
    for (const a of b.failing ?? []) failing.add(a);
  }
  return { ok, failed, callers: callers.size, failing: failing.size };
}

/** `list` with `a` added, unless present or already `cap` long (a bounded set). */
function withAccount(list: readonly string[] | undefined, a: string, cap: number): readonly string[] {
  const l = list ?? [];
  return l.includes(a) || l.length >= cap ? l : [...l, a];
}

const open = (now: number, s: BreakerSettings): Circuit => ({ ...CLOSED, state: "open", until: now + s.coolDownMs });

/** The circuit as time alone leaves it: an open one past its cool-down is half-open. */
export function settle(c: Circuit, now: number): Circuit {
  return c.state === "open" && now >= c.until ? { ...CLOSED, state: "half_open" } : c;
}

/**
 * Whether a call may go now, and the circuit with it counted. A probe whose outcome never
 * came back (its caller vanished) frees its slot after a cool-down, so half_open cannot stick.
 */
export function admit(
  c0: Circuit,
  now: number,
  s: BreakerSettings,
): { allowed: boolean; probe: boolean; circuit: Circuit } {
  const c = settle(c0, now);
  if (c.state === "closed") return { allowed: true, probe: false, circuit: c };
  if (c.state === "open") return { allowed: false, probe: false, circuit: c };
  const probing = c.probing > 0 && now - c.probeAt >= s.coolDownMs ? 0 : c.probing;
  if (probing + c.probeOk >= s.probes) return { allowed: false, probe: false, circuit: c };
  return { allowed: true, probe: true, circuit: { ...c, probing: probing + 1, probeAt: now } };
}

/**
 * An outcome: `ok`, `failed` (it says the provider is unwell), or `neutral` (it says nothing:
 * the request was rejected, the caller left). `probe` is what `admit` said about that call.
 */
export function record(
  c0: Circuit,
  now: number,
  s: BreakerSettings,
  outcome: "ok" | "failed" | "neutral",
  probe: boolean,
  account = "",
): Circuit {
  const c = settle(c0, now);
  if (c.state === "half_open") {
    if (!probe) return c; // a call admitted before the circuit opened says nothing of now
    const probing = Math.max(0, c.probing - 1);
    if (outcome === "failed") return open(now, s);
    if (outcome === "neutral") return { ...c, probing };
    return c.probeOk + 1 >= s.probes ? CLOSED : { ...c, probing, probeOk: c.probeOk + 1 };
  }
  if (c.state === "open" || outcome === "neutral") return c;
  const slot = slotOf(now, s);
  const window = [...fresh(c.window, now, s)];
  const last = window[window.length - 1];
  const add = { ok: outcome === "ok" ? 1 : 0, failed: outcome === "failed" ? 1 : 0 };
  const cap = Math.max(1, s.minAccounts ?? 1);
  const into = (b: Bucket | undefined): Bucket => ({
    slot,
    ok: (b?.ok ?? 0) + add.ok,
    failed: (b?.failed ?? 0) + add.failed,
    callers: withAccount(b?.callers, account, cap),
    failing: outcome === "failed" ? withAccount(b?.failing, account, cap) : (b?.failing ?? []),
  });
  if (last && last.slot === slot) window[window.length - 1] = into(last);
  else window.push(into(undefined));
  const next: Circuit = { ...c, window };
  // The counts first; the accounts (two sets) only when the counts would open it.
  let ok = 0;
  let failed = 0;
  for (const b of window) {
    ok += b.ok;
    failed += b.failed;
  }
  const calls = ok + failed;
  if (calls < s.minCalls || failed < s.failureRatio * calls) return next;
  const t = totals(next, now, s);
  return t.failing >= Math.min(cap, t.callers) ? open(now, s) : next;
}

/** Another instance found the provider down: open until its cool-down ends, unless already open longer. */
export function openUntil(c: Circuit, until: number, now: number): Circuit {
  if (until <= now || (c.state === "open" && c.until >= until)) return c;
  return { ...CLOSED, state: "open", until };
}
