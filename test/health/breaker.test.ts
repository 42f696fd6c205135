/**
 * The breaker's state machine (src/core/health/breaker.ts) and the tracker around it, without
 * any I/O: fixed scenarios, then properties over random sequences of calls, outcomes and time.
 */
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import {
  admit,
  CLOSED,
  openUntil,
  record,
  settle,
  totals,
  type BreakerSettings,
  type Circuit,
} from "../../src/core/health/breaker";
import { HealthTracker, type Transition } from "../../src/core/health/tracker";

const S: BreakerSettings = { windowMs: 10_000, minCalls: 4, failureRatio: 0.5, coolDownMs: 1000, probes: 2 };

function fail(c: Circuit, now: number, n = 1): Circuit {
  for (let i = 0; i < n; i++) c = record(c, now, S, "failed", false);
  return c;
}

describe("breaker rules", () => {
  test("opens at the minimum of calls with the failed share reached, not before", () => {
    let c = fail(CLOSED, 0, 3);
    expect(c.state).toBe("closed"); // 3 < minCalls
    c = fail(c, 1);
    expect(c.state).toBe("open");
    expect(c.until).toBe(1 + S.coolDownMs);
  });

  test("accounts: failures of one account among several never open it; of min(minAccounts, callers) do", () => {
    const A: BreakerSettings = { ...S, minAccounts: 3 };
    let c = CLOSED;
    // The victim's successes and the attacker's failures: two callers, one failing account.
    for (let i = 0; i < 50; i++) c = record(c, i, A, i % 5 === 0 ? "ok" : "failed", false, i % 5 === 0 ? "v" : "x");
    expect(c.state).toBe("closed");
    expect(totals(c, 50, A)).toMatchObject({ callers: 2, failing: 1 });
    // A second failing account is a third caller: 2 of min(3, 3) is not enough; a third opens it.
    c = record(c, 51, A, "failed", false, "y");
    expect(c.state).toBe("closed");
    c = record(c, 52, A, "failed", false, "z");
    expect(c.state).toBe("open");
    // One account alone using a provider still opens it on its own failures.
    let solo = CLOSED;
    for (let i = 0; i < 4; i++) solo = record(solo, i, A, "failed", false, "only");
    expect(solo.state).toBe("open");
    // The account lists stay bounded by minAccounts.
    let many = CLOSED;
    for (let i = 0; i < 100; i++) many = record(many, 0, A, "ok", false, `acct-${i}`);
    expect(many.window[0]!.callers).toHaveLength(3);
  });

  test("successes keep the share under the ratio", () => {
    let c = CLOSED;
    for (let i = 0; i < 20; i++) c = record(c, i, S, i % 3 === 2 ? "failed" : "ok", false);
    expect(c.state).toBe("closed");
  });

  test("neutral outcomes (rejected requests, callers gone) never count", () => {
    let c = CLOSED;
    for (let i = 0; i < 100; i++) c = record(c, i, S, "neutral", false);
    expect(c.state).toBe("closed");
    expect(totals(c, 100, S)).toEqual({ ok: 0, failed: 0, callers: 0, failing: 0 });
  });

  test("failures older than the window are forgotten", () => {
    const c = fail(CLOSED, 0, 3);
    expect(totals(c, S.windowMs + 1, S)).toEqual({ ok: 0, failed: 0, callers: 0, failing: 0 });
    expect(fail(c, S.windowMs + 1).state).toBe("closed");
  });

  test("cool-down, then probes: that many successes close it, a failure reopens it", () => {
    const opened = fail(CLOSED, 0, 4);
    expect(admit(opened, 999, S).allowed).toBe(false);
    const a = admit(opened, 1000, S);
    expect(a).toMatchObject({ allowed: true, probe: true });
    const b = admit(a.circuit, 1001, S);
    expect(b).toMatchObject({ allowed: true, probe: true });
    expect(admit(b.circuit, 1002, S).allowed).toBe(false); // every probe slot is out
    const one = record(b.circuit, 1010, S, "ok", true);
    expect(one.state).toBe("half_open");
    expect(record(one, 1020, S, "ok", true)).toEqual(CLOSED);
    const reopened = record(one, 1020, S, "failed", true);
    expect(reopened.state).toBe("open");
    expect(reopened.until).toBe(1020 + S.coolDownMs);
  });

  test("a probe that never reports frees its slot after a cool-down", () => {
    const c = admit(admit(fail(CLOSED, 0, 4), 1000, S).circuit, 1000, S).circuit;
    expect(admit(c, 1500, S).allowed).toBe(false);
    expect(admit(c, 2000, S).allowed).toBe(true);
  });

  test("an open learned from another instance lasts until its end, and never shortens a longer one", () => {
    const c = openUntil(CLOSED, 5000, 0);
    expect(settle(c, 4999).state).toBe("open");
    expect(settle(c, 5000).state).toBe("half_open");
    expect(openUntil(c, 3000, 0)).toBe(c);
    expect(openUntil(CLOSED, 100, 200)).toBe(CLOSED); // already over
  });
});

type Step =
  | { dt: number; kind: "call"; outcome: "ok" | "failed" | "neutral" }
  | { dt: number; kind: "learn"; ahead: number };

const step: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 9,
    arbitrary: fc.record({
      dt: fc.integer({ min: 0, max: 1500 }),
      kind: fc.constant("call" as const),
      outcome: fc.constantFrom("ok" as const, "failed" as const, "neutral" as const),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      dt: fc.integer({ min: 0, max: 1500 }),
      kind: fc.constant("learn" as const),
      ahead: fc.integer({ min: -500, max: 3000 }),
    }),
  },
);
const settings: fc.Arbitrary<BreakerSettings> = fc.record({
  windowMs: fc.integer({ min: 100, max: 20_000 }),
  minCalls: fc.integer({ min: 1, max: 20 }),
  failureRatio: fc.double({ min: 0.05, max: 1, noNaN: true }),
  coolDownMs: fc.integer({ min: 100, max: 5000 }),
  probes: fc.integer({ min: 1, max: 5 }),
});

describe("breaker properties", () => {
  test("an open circuit admits nothing before its cool-down ends; half-open admits at most `probes` at once", () => {
    fc.assert(
      fc.property(settings, fc.array(step, { maxLength: 200 }), (s, steps) => {
        let c = CLOSED;
        let now = 0;
        for (const st of steps) {
          now += st.dt;
          if (st.kind === "learn") {
            c = openUntil(c, now + st.ahead, now);
            continue;
          }
          const before = settle(c, now);
          const a = admit(c, now, s);
          if (before.state === "open") expect(a.allowed).toBe(false);
          if (before.state === "closed") expect(a).toMatchObject({ allowed: true, probe: false });
          if (a.probe) expect(a.circuit.probing).toBeLessThanOrEqual(s.probes);
          if (!a.allowed) continue;
          c = record(a.circuit, now, s, st.outcome, a.probe);
          if (a.circuit.state === "half_open" && st.outcome === "failed") expect(c.state).toBe("open");
        }
      }),
      { numRuns: 300 },
    );
  });

  test("only failures open a circuit: ok and neutral outcomes alone never do", () => {
    fc.assert(
      fc.property(
        settings,
        fc.array(fc.record({ dt: fc.integer({ min: 0, max: 2000 }), ok: fc.boolean() }), { maxLength: 300 }),
        (s, steps) => {
          let c = CLOSED;
          let now = 0;
          for (const st of steps) {
            now += st.dt;
            c = record(admit(c, now, s).circuit, now, s, st.ok ? "ok" : "neutral", false);
            expect(c.state).toBe("closed");
          }
        },
      ),
    );
  });

  test("a closed circuit opens exactly when the window reaches minCalls with the failed share at the ratio", () => {
    fc.assert(
      fc.property(
        settings,
        fc.array(fc.record({ dt: fc.integer({ min: 0, max: 3000 }), failed: fc.boolean() }), { maxLength: 300 }),
        (s, steps) => {
          let c = CLOSED;
          let now = 0;
          for (const st of steps) {
            now += st.dt;
            if (c.state !== "closed") return;
            const next = record(c, now, s, st.failed ? "failed" : "ok", false);
            // The window the rule judged: the old one plus this outcome.
            const t = totals(c, now, s);
            const ok = t.ok + (st.failed ? 0 : 1);
            const failed = t.failed + (st.failed ? 1 : 0);
            const shouldOpen = ok + failed >= s.minCalls && failed >= s.failureRatio * (ok + failed);
            expect(next.state).toBe(shouldOpen ? "open" : "closed");
            c = next;
          }
        },
      ),
    );
  });

  test("the window never holds more slices than BUCKETS, nor outcomes older than windowMs", () => {
    fc.assert(
      fc.property(
        settings,
        fc.array(fc.record({ dt: fc.integer({ min: 0, max: 4000 }), failed: fc.boolean() }), { maxLength: 300 }),
        (s, steps) => {
          let c = CLOSED;
          let now = 0;
          for (const st of steps) {
            now += st.dt;
            c = settle(c, now).state === "closed" ? record(c, now, s, st.failed ? "failed" : "ok", false) : c;
            expect(c.window.length).toBeLessThanOrEqual(10);
            for (const b of c.window) expect(b.slot).toBeGreaterThan(Math.floor(now / (s.windowMs / 10)) - 10);
          }
        },
      ),
    );
  });
});

describe("tracker", () => {
  const settingsT = { ...S, slowMs: 0 };

  test("a provider-wide open skips the provider's other models; a model's own open skips only it", () => {
    let now = 0;
    const t = new HealthTracker(settingsT, () => now);
    const seen: Transition[] = [];
    t.onTransition((x) => seen.push(x));
    // Model m1 fails at p: both its circuits open (the provider's holds only m1's calls).
    for (let i = 0; i < 4; i++) {
      const a = t.admit("p", "m1");
      if (a.allowed) a.ticket.end("failed");
    }
    expect(t.state("p")).toBe("open");
    expect(t.state("p", "m1")).toBe("open");
    expect(t.admit("p", "m2")).toMatchObject({ allowed: false, retryAfterMs: 1000 });
    expect(seen.map((x) => [x.model, x.to])).toEqual([
      ["*", "open"],
      ["m1", "open"],
    ]);
    // After the cool-down the provider probes with m2 while m1 is half-open too.
    now = 1000;
    const probe = t.admit("p", "m2");
    expect(probe.allowed).toBe(true);
    if (probe.allowed) probe.ticket.end("ok");
    expect(t.state("p")).toBe("half_open");
    const probe2 = t.admit("p", "m2");
    if (probe2.allowed) probe2.ticket.end("ok");
    expect(t.state("p")).toBe("closed");
    expect(t.state("p", "m1")).toBe("half_open");
  });

  test("a slow success counts as failed when slowMs is set; a ticket counts once", () => {
    const t = new HealthTracker({ ...settingsT, minCalls: 2, slowMs: 100 }, () => 0);
    const a = t.admit("p", "m");
    if (!a.allowed) throw new Error("closed circuit refused");
    a.ticket.end("ok", 150);
    a.ticket.end("ok", 150);
    expect(t.state("p")).toBe("closed");
    const b = t.admit("p", "m");
    if (b.allowed) b.ticket.end("ok", 150);
    expect(t.state("p")).toBe("open");
  });

  test("learned opens are transitions marked remote", () => {
    const t = new HealthTracker(settingsT, () => 0);
    const seen: Transition[] = [];
    t.onTransition((x) => seen.push(x));
    t.learned("p", "*", 5000);
    expect(seen).toEqual([{ provider: "p", model: "*", to: "open", until: 5000, remote: true }]);
    expect(t.admit("p", "m")).toMatchObject({ allowed: false, retryAfterMs: 5000 });
  });
});
