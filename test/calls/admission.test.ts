/**
 * CallAdmission on its own: per-key and per-account limits, the fair share of a tight budget,
 * the wait for a slot of a full budget (fewest calls first, bounded, abortable) and releases.
 */
import { describe, expect, test } from "bun:test";
import { CallAdmission, type CallSlot } from "../../src/core/calls/admission";
import { GatewayError } from "../../src/core/errors";

const who = (userId: string, keyId = `${userId}-k`) => ({ userId, keyId });

async function refusal(p: Promise<unknown>): Promise<{ code: string; status: number; retryAfter?: number }> {
  try {
    await p;
  } catch (e) {
    if (e instanceof GatewayError) return { code: e.errorCode, status: e.status, retryAfter: e.extras.retryAfter };
    throw e;
  }
  throw new Error("admitted");
}

describe("CallAdmission", () => {
  test("per-key and per-account limits: 429 concurrency_limit_exceeded with Retry-After; a release gives the slot back once", async () => {
    const a = new CallAdmission({ budget: 0, perAccount: 3, perKey: 2, queueTimeoutMs: 1000 });
    const s1 = await a.admit(who("u", "k1"));
    await a.admit(who("u", "k1"));
    expect(await refusal(a.admit(who("u", "k1")))).toEqual({
      code: "concurrency_limit_exceeded",
      status: 429,
      retryAfter: 1,
    });
    await a.admit(who("u", "k2"));
    expect((await refusal(a.admit(who("u", "k3")))).code).toBe("concurrency_limit_exceeded");
    await a.admit(who("v", "k9")); // another account
    s1.release();
    s1.release(); // idempotent: frees one slot, not two
    await a.admit(who("u", "k3"));
    expect((await refusal(a.admit(who("u", "k3")))).code).toBe("concurrency_limit_exceeded");
    expect(a.running).toBe(4);
  });

  test("a tight budget keeps its last quarter for accounts under their share", async () => {
    const a = new CallAdmission({ budget: 8, perAccount: 0, perKey: 0, queueTimeoutMs: 1000 });
    const heavy: CallSlot[] = [];
    for (let i = 0; i < 6; i++) heavy.push(await a.admit(who("heavy")));
    // 2 of 8 free: heavy holds more than 8 / (1 + 1) and is refused, although slots are free.
    expect((await refusal(a.admit(who("heavy")))).code).toBe("concurrency_limit_exceeded");
    // A newcomer gets them.
    await a.admit(who("light"));
    await a.admit(who("light"));
    expect(a.running).toBe(8);
    heavy[0]!.release();
    expect(a.running).toBe(7);
  });

  test("a full budget: an account under its share takes the newest slot of the account most over its share", async () => {
    const a = new CallAdmission({ budget: 4, perAccount: 0, perKey: 0, queueTimeoutMs: 2000 });
    const h = [await a.admit(who("h")), await a.admit(who("h")), await a.admit(who("h"))];
    await a.admit(who("m")); // 4 of 4
    // m has 1 of its share 4 / 2: h (3, over its share) loses its newest call, m runs at once.
    await a.admit(who("m"));
    expect(h[2]!.preempted.aborted).toBe(true);
    expect(h[2]!.preempted.reason).toBeInstanceOf(GatewayError);
    expect((h[2]!.preempted.reason as GatewayError).errorCode).toBe("concurrency_limit_exceeded");
    expect(h[0]!.preempted.aborted || h[1]!.preempted.aborted).toBe(false);
    expect(a.running).toBe(4);
    expect(a.preemptions).toBe(1);
    // The pre-empted call's own release later changes nothing: its slot is m's now.
    h[2]!.release();
    expect(a.running).toBe(4);
    // h holds 2, over its share of 4 / 3 accounts: refused at once, not queued.
    expect((await refusal(a.admit(who("h")))).code).toBe("concurrency_limit_exceeded");
    // n has none: h (2 > 1) loses its newest again.
    await a.admit(who("n"));
    expect(h[1]!.preempted.aborted).toBe(true);
    expect(a.running).toBe(4);
  });

  test("a full budget with nobody over its share: an account under its share waits for the next free slot", async () => {
    const a = new CallAdmission({ budget: 4, perAccount: 0, perKey: 0, queueTimeoutMs: 2000 });
    const h = [await a.admit(who("h")), await a.admit(who("h"))];
    await a.admit(who("m"));
    await a.admit(who("n")); // 4 of 4
    // o's share is 4 / 4 = 1: h (2 > 1) loses its newest.
    await a.admit(who("o"));
    expect(h[1]!.preempted.aborted).toBe(true);
    expect(a.preemptions).toBe(1);
    // Now every account holds 1, its share: p waits for the next free slot.
    let admitted = false;
    const p1 = a.admit(who("p")).then((s) => ((admitted = true), s));
    expect(a.waiting).toBe(1);
    await Bun.sleep(10);
    expect(admitted).toBe(false);
    h[0]!.release();
    await p1;
    expect(a.preemptions).toBe(1);
    expect(a.waiting).toBe(0);
    expect(a.running).toBe(4);
  });

  test("a wait ends with 503 after the queue timeout, or with the caller's abort; either leaves nothing counted", async () => {
    const a = new CallAdmission({ budget: 1, perAccount: 0, perKey: 1, queueTimeoutMs: 100 });
    const only = await a.admit(who("h"));
    const t0 = performance.now();
    expect(await refusal(a.admit(who("w", "wk")))).toEqual({ code: "service_unavailable", status: 503, retryAfter: 1 });
    expect(performance.now() - t0).toBeGreaterThanOrEqual(90);
    const ac = new AbortController();
    const aborted = a.admit(who("w", "wk"), ac.signal);
    ac.abort(new Error("client left"));
    await expect(aborted).rejects.toThrow("client left");
    expect(a.waiting).toBe(0);
    only.release();
    // Nothing of the two waits is left: the key (limit 1) is admitted.
    (await a.admit(who("w", "wk"))).release();
    expect(a.running).toBe(0);
  });

  test("queue timeout 0: a full budget answers 503 at once", async () => {
    const a = new CallAdmission({ budget: 1, perAccount: 0, perKey: 0, queueTimeoutMs: 0 });
    await a.admit(who("h"));
    expect((await refusal(a.admit(who("w")))).code).toBe("service_unavailable");
  });
});
