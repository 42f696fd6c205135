/**
 * Settlements (src/core/billing/settlements.ts): what the answer waits for. Before the answer,
 * until its settle landed, but a settle that hangs (the database out of reach) lets the answer
 * go after about `maxWaitMs` while it goes on; behind the answer, not at all. Every settle runs
 * exactly once, and quiesce sees the ones in flight.
 */
import { expect, test } from "bun:test";
import { Settlements, type SettleCall } from "../../src/core/billing/settlements";
import type { UsageEvent } from "../../src/core/billing/ledger";

const call = (id: string): SettleCall => ({ id, userId: "u1", costMicro: 1000n, tokens: 10, event: null });

/** A ledger whose settles end only when the test says so. */
function heldLedger() {
  const calls: string[] = [];
  const ends = new Map<string, () => void>();
  return {
    calls,
    /** Ends the settle of `id` once it has started (a settle starts on a later turn). */
    async end(id: string) {
      while (!ends.has(id)) await Bun.sleep(1);
      ends.get(id)!();
    },
    settle(id: string): Promise<boolean> {
      calls.push(id);
      return new Promise((resolve) => ends.set(id, () => resolve(true)));
    },
  };
}

const state = async (p: Promise<void>) => {
  let done = false;
  void p.then(() => (done = true));
  await Bun.sleep(20);
  return done;
};

test("before the answer: the answer waits for its settle, and each settle runs once", async () => {
  const ledger = heldLedger();
  const s = new Settlements(ledger, () => {}, "before_answer", 60_000);
  const a = s.start(call("a"));
  const b = s.start(call("b"));
  expect(await state(a)).toBe(false);
  expect(s.pendingFor("u1")).toBe(true);
  await ledger.end("a");
  expect(await state(a)).toBe(true);
  expect(await state(b)).toBe(false);
  await ledger.end("b");
  expect(await state(b)).toBe(true);
  expect(ledger.calls).toEqual(["a", "b"]);
  expect(s.pending).toBe(0);
  expect(s.pendingFor("u1")).toBe(false);
});

test("a settle that hangs lets its answer go after its bound, and still runs to its end", async () => {
  const ledger = heldLedger();
  const s = new Settlements(ledger, () => {}, "before_answer", 50);
  const hung = s.start(call("hung"));
  await hung; // let go, though the settle has not landed
  expect(s.pending).toBe(1);
  // A later answer still waits for its own settle, not for the hung one's bound.
  const next = s.start(call("next"));
  await ledger.end("next");
  await next;
  expect(s.pending).toBe(1);
  await ledger.end("hung");
  await s.quiesce();
  expect(s.pending).toBe(0);
  expect(ledger.calls).toEqual(["hung", "next"]);
});

test("behind the answer: the answer does not wait; quiesce waits for the settle", async () => {
  const ledger = heldLedger();
  const s = new Settlements(ledger, () => {}, "behind_answer", 60_000);
  await s.start(call("c"));
  expect(s.pending).toBe(1);
  await Bun.sleep(5);
  const q = s.quiesce("u1", 60_000);
  expect(await state(q)).toBe(false);
  await ledger.end("c");
  await q;
  expect(s.pending).toBe(0);
});

test("the meter hears each charge that landed once, and not a settle that found its hold closed", async () => {
  const heard: string[] = [];
  const answers = new Map([
    ["landed", true],
    ["closed-before", false],
  ]);
  const ledger = { settle: async (id: string) => answers.get(id)! };
  const s = new Settlements(ledger, () => {}, "before_answer", 60_000, { landed: (event) => heard.push(event.model) });
  const event = (model: string) => ({ model }) as unknown as UsageEvent;
  await s.start({ ...call("landed"), event: event("landed") });
  await s.start({ ...call("closed-before"), event: event("closed-before") });
  expect(heard).toEqual(["landed"]);
});
