/**
 * The credit-lease policy (src/core/billing/lease-policy.ts) against a model of the database:
 * random calls, charges, releases, retirements, idle ticks and statement answers in random order
 * (statements that fail included), with the ledger's invariants checked after every step
 * (docs/ledger.md, "Invariants"). Pure: no database, so it runs on both sides of the suite.
 */
import { describe, expect, test } from "bun:test";
import { LeasePolicy, type Lease, type LeaseEffect } from "../../src/core/billing/lease-policy";
import type { HoldRequest } from "../../src/core/billing/ledger";

/** A small deterministic PRNG (mulberry32), so a failing seed can be replayed. */
function prng(seed: number) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** What gw_lease_open / gw_lease_charge / gw_lease_trim do to one account, in memory. */
class ModelDb {
  free: bigint;
  leases = new Map<string, { amount: bigint; closed: boolean }>();
  charged = new Map<string, bigint>();
  constructor(readonly initial: bigint) {
    this.free = initial;
  }
  open(r: HoldRequest): "ok" | "insufficient_credits" {
    if (this.free < r.amountMicro) return "insufficient_credits";
    this.free -= r.amountMicro;
    this.leases.set(r.id, { amount: r.amountMicro, closed: false });
    return "ok";
  }
  charge(leaseId: string, callId: string, costMicro: bigint, holdMicro: bigint): void {
    if (this.charged.has(callId)) throw new Error(`call ${callId} charged twice`);
    const lease = this.leases.get(leaseId)!;
    if (lease.closed) throw new Error(`call ${callId} charged to lease ${leaseId} after it closed`);
    const cost = costMicro > holdMicro ? holdMicro : costMicro;
    if (cost > lease.amount) throw new Error(`lease ${leaseId} reserves ${lease.amount}, a call of it costs ${cost}`);
    lease.amount -= cost;
    this.charged.set(callId, cost);
  }
  trim(leaseId: string, keep: bigint, close: boolean): void {
    const lease = this.leases.get(leaseId)!;
    if (lease.closed) return;
    const back = close ? lease.amount : lease.amount > keep ? lease.amount - keep : 0n;
    lease.amount -= back;
    this.free += back;
    if (close) lease.closed = true;
  }
}

interface Call {
  req: HoldRequest;
  asked: { costMicro: bigint; holdMicro: bigint; lease: string } | null;
}

function run(seed: number, steps: number) {
  const rnd = prng(seed);
  const pick = <T>(xs: T[]) => xs[Math.floor(rnd() * xs.length)]!;
  const db = new ModelDb(50_000_000n);
  const policy = new LeasePolicy({
    busyCalls: 4,
    busyWindowMs: 100,
    leaseCalls: 64n,
    minCalls: 4n,
    maxAgeMs: 5_000,
    idleMs: 1_000,
  });
  const leases = new Map<string, Lease>();
  const pending: (LeaseEffect | { kind: "charge"; call: Call })[] = [];
  const calls = new Map<string, Call>();
  const costs = new Map<string, bigint>();
  let now = 0;
  let next = 0;
  const queue = (effects: readonly LeaseEffect[]) => {
    for (const e of effects) {
      if (e.kind !== "open") leases.set(e.lease.id, e.lease);
      pending.push(e);
    }
  };
  const check = () => {
    expect(db.free >= 0n).toBe(true);
    for (const [id, lease] of leases) {
      const row = db.leases.get(id)!;
      expect(lease.availMicro >= 0n && lease.keepMicro >= 0n).toBe(true);
      // The database never reserves less than the calls in flight may still spend…
      if (!row.closed) expect(row.amount >= lease.keepMicro).toBe(true);
      // …and an active lease's accounting is exact: what it holds is what is available plus kept.
      if (!lease.retired) expect(row.amount).toBe(lease.availMicro + lease.keepMicro);
    }
  };
  const send = (item: (typeof pending)[number]) => {
    const fails = rnd() < 0.05;
    switch (item.kind) {
      case "open": {
        const opened = policy.opened(item, fails ? null : db.open(item.request), now);
        if (opened.lease) leases.set(opened.lease.id, opened.lease);
        queue(opened.effects);
        return;
      }
      case "charge": {
        // A failed statement changes nothing; the settle is retried (asked again, accounted once).
        if (fails) {
          const { lease, holdMicro } = policy.chargeAsked(item.call.req.id, item.call.asked!.costMicro, 0);
          pending.push({
            kind: "charge",
            call: { ...item.call, asked: { ...item.call.asked!, holdMicro, lease: lease.id } },
          });
          return;
        }
        db.charge(item.call.asked!.lease, item.call.req.id, item.call.asked!.costMicro, item.call.asked!.holdMicro);
        queue(policy.chargeLanded(item.call.req.id));
        return;
      }
      case "trim":
        if (!fails) db.trim(item.lease.id, item.keepMicro, false);
        return;
      case "close":
        // A failed close is left to the sweeper in production; the model retries it.
        if (fails) pending.push(item);
        else db.trim(item.lease.id, 0n, true);
        return;
    }
  };
  for (let i = 0; i < steps; i++) {
    const r = rnd();
    const inFlight = [...calls.values()].filter((c) => !c.asked);
    if (r < 0.4) {
      const keyId = pick(["k1", "k2"]);
      const req: HoldRequest = {
        id: `c${next++}`,
        userId: "u",
        keyId,
        amountMicro: BigInt(1 + Math.floor(rnd() * 50)) * 1000n,
        tokens: 0,
        ttlSeconds: 60,
        leasable: rnd() < 0.95,
      };
      const { held, effects } = policy.carve(req, {
        now,
        month: () => "2026-11",
        room: () => ({ micro: db.free, tokens: null }),
        newId: () => `l${next++}`,
      });
      queue(effects);
      if (held) calls.set(req.id, { req, asked: null });
    } else if (r < 0.55 && inFlight.length) {
      const call = pick(inFlight);
      const costMicro = (call.req.amountMicro * BigInt(Math.floor(rnd() * 150))) / 100n;
      const { lease, holdMicro } = policy.chargeAsked(call.req.id, costMicro, 0);
      call.asked = { costMicro, holdMicro, lease: lease.id };
      costs.set(call.req.id, costMicro > holdMicro ? holdMicro : costMicro);
      pending.push({ kind: "charge", call });
    } else if (r < 0.62 && inFlight.length) {
      const call = pick(inFlight);
      calls.delete(call.req.id);
      queue(policy.release(call.req.id).effects);
    } else if (r < 0.7) {
      now += Math.floor(rnd() * 400);
      queue(policy.idle(now));
    } else if (r < 0.73) {
      queue(policy.retireAll(rnd() < 0.5 ? { userId: "u" } : { keyId: "k1" }).effects);
    } else if (pending.length) {
      send(pending.splice(Math.floor(rnd() * pending.length), 1)[0]!);
    }
    check();
  }
  // Every call finishes, every lease retires, every statement lands.
  for (const call of calls.values()) if (!call.asked) queue(policy.release(call.req.id).effects);
  queue(policy.retireAll().effects);
  for (let guard = 0; pending.length && guard < 100_000; guard++) {
    send(pending.shift()!);
    check();
  }
  expect(pending.length).toBe(0);
  const charged = [...db.charged.values()].reduce((a, b) => a + b, 0n);
  const asked = [...costs.values()].reduce((a, b) => a + b, 0n);
  return { db, charged, asked, leases, opened: db.leases.size };
}

describe("credit-lease policy against a model of the database", () => {
  for (const seed of [1, 2, 3, 4, 5, 6, 7, 8]) {
    test(`seed ${seed}: every call is charged once and capped at its hold; what leases reserve covers their calls; all is given back`, () => {
      const { db, charged, asked, opened } = run(seed, 4000);
      expect(opened).toBeGreaterThan(0); // the run exercised leases
      expect(charged).toBe(asked);
      for (const row of db.leases.values()) expect(row).toMatchObject({ closed: true, amount: 0n });
      expect(db.free).toBe(db.initial - charged);
    });
  }
});
