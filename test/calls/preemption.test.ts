/**
 * Issue 28.3: accounts that fill the upstream budget with calls to a hung upstream must not
 * make another tenant wait for the hang's deadline. A real gateway with a budget of 12 and no
 * per-account or per-key limit; two accounts with four keys each, one after the other, send 12
 * calls each (JSON and streams) that the simulator never answers, and fill it. A tenant under its share then calls: it must be
 * answered while the attackers' calls are still hung (before this fix it waited in the queue
 * for UPSTREAM_QUEUE_TIMEOUT_MS and got 503). An account without credit must neither take a
 * slot of the contended budget nor pre-empt anyone: 402 at once.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { startTestGateway, type TestGateway } from "../harness";
import { fastUser, tenant, user } from "../support/chat";
import { checkBooks } from "../support/books";

setDefaultTimeout(60_000);

const BUDGET = 12;

describe("pre-emption of over-share calls (hung upstream, budget 12)", () => {
  let g: TestGateway;
  const stop = new AbortController();
  const hung: Promise<number>[] = [];
  let settled = 0;

  beforeAll(async () => {
    g = await startTestGateway({
      db: "pglite",
      env: {
        UPSTREAM_MAX_CONCURRENT: String(BUDGET),
        CONCURRENCY_PER_ACCOUNT: "0",
        CONCURRENCY_PER_KEY: "0",
        UPSTREAM_QUEUE_TIMEOUT_MS: "20000",
        UPSTREAM_FIRST_BYTE_TIMEOUT_MS: "60000",
      },
    });
  }, 60_000);

  afterAll(async () => {
    stop.abort();
    await Promise.allSettled(hung);
    await g?.stop();
  });

  const send = (key: string, content: string, stream = false) =>
    fetch(g.url + "/v1/chat/completions", {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "gpt-4o-mini", max_tokens: 20, stream, messages: user(content) }),
      signal: stop.signal,
    });

  test("a tenant under its share is answered while two accounts' hung calls fill the budget; a broke one gets 402", async () => {
    // One account after another, as the attack of the issue: the first takes three quarters of
    // the budget, the second the rest (and, over its share, some of the first's).
    const until = async (n: number) => {
      const deadline = Date.now() + 10_000;
      while (g.gw.deps.calls.admission.running < n && Date.now() < deadline) await Bun.sleep(20);
      await Bun.sleep(300);
    };
    for (let a = 0; a < 2; a++) {
      const owner = await fastUser(g, { creditKrw: 1000 });
      const keys = [];
      for (let k = 0; k < 4; k++) keys.push((await g.newKey(owner, {})).key as string);
      for (let i = 0; i < 12; i++) {
        const p = send(keys[i % 4]!, `attack ${a}.${i} [sim:hang]`, i % 2 === 0)
          .then(async (r) => {
            await r.text().catch(() => "");
            return r.status;
          })
          .catch(() => 0)
          .finally(() => settled++);
        hung.push(p);
      }
      await until(a === 0 ? (BUDGET * 3) / 4 : BUDGET);
    }
    // Every slot of the budget is taken by the attackers' hung calls.
    expect(g.gw.deps.calls.admission.running).toBe(BUDGET);
    expect(g.gw.deps.calls.admission.waiting).toBe(0);
    const settledBefore = settled;
    const preemptedBefore = g.gw.deps.calls.admission.preemptions;

    // An account without credit neither waits for a slot nor pre-empts anyone: 402 at once.
    const broke = await fastUser(g, {});
    const brokeKey = (await g.newKey(broke, {})).key as string;
    const refused = await g.call("POST", "/v1/chat/completions", {
      token: brokeKey,
      body: { model: "gpt-4o-mini", max_tokens: 20, messages: user("free ride [sim:hang]") },
    });
    expect(refused.status).toBe(402);
    expect(refused.body.detail.error).toBe("insufficient_credits");
    expect(g.gw.deps.calls.admission.preemptions).toBe(preemptedBefore);
    expect(g.gw.deps.calls.admission.running).toBe(BUDGET);

    const victim = await tenant(g, 1000);
    const r = await g.call("POST", "/v1/chat/completions", {
      token: victim.key.key,
      body: { model: "gpt-4o-mini", max_tokens: 20, messages: user("hello") },
    });
    expect(r.status).toBe(200);
    expect(r.body.choices[0].message.content.length).toBeGreaterThan(0);
    // Answered while the attackers' calls are still hung: only the one pre-empted call ended.
    expect(settled - settledBefore).toBeLessThanOrEqual(1);
    expect(hung.length - settled).toBe(BUDGET - 1);
    expect(g.gw.deps.calls.admission.preemptions - preemptedBefore).toBe(1);
    expect(await g.metrics()).toContain(`gateway_calls_preempted_total ${g.gw.deps.calls.admission.preemptions}\n`);
    // A second call of the victim finds room the same way.
    const again = await g.call("POST", "/v1/chat/completions", {
      token: victim.key.key,
      body: { model: "gpt-4o-mini", max_tokens: 20, messages: user("again") },
    });
    expect(again.status).toBe(200);
    const books = await checkBooks(g.gw.deps.db, [victim.user.id]);
    expect(books.violations).toEqual([]);
    expect(books.usageEvents).toBe(2);
  });
});

describe("pre-emption of an open stream", () => {
  let g: TestGateway;
  beforeAll(async () => {
    g = await startTestGateway({
      db: "pglite",
      env: { UPSTREAM_MAX_CONCURRENT: "4", CONCURRENCY_PER_ACCOUNT: "0", CONCURRENCY_PER_KEY: "0" },
    });
  }, 60_000);
  afterAll(async () => {
    await g?.stop();
  });

  test("the over-share account's newest stream ends, is charged what it delivered, and the books balance", async () => {
    const a = await tenant(g, 1000);
    const b = await tenant(g, 1000);
    const streams: Promise<{ done: boolean; bytes: number }>[] = [];
    const open = (key: string, i: number) =>
      fetch(g.url + "/v1/chat/completions", {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body: JSON.stringify({
          model: "gpt-4o-mini",
          max_tokens: 200,
          stream: true,
          messages: user(`long ${i} [sim:tokens=40] [sim:chunk_ms=150]`),
        }),
      }).then(async (r) => {
        let raw = "";
        try {
          const reader = r.body!.getReader();
          for (let c = await reader.read(); !c.done; c = await reader.read()) raw += new TextDecoder().decode(c.value);
        } catch {}
        return { done: raw.includes("data: [DONE]"), bytes: raw.length };
      });
    for (let i = 0; i < 3; i++) streams.push(open(a.key.key, i));
    while (g.gw.deps.calls.admission.running < 3) await Bun.sleep(10);
    streams.push(open(b.key.key, 3));
    while (g.gw.deps.calls.admission.running < 4) await Bun.sleep(10);
    await Bun.sleep(300); // every stream has opened and sent some content
    const victim = await tenant(g, 1000);
    const r = await g.call("POST", "/v1/chat/completions", {
      token: victim.key.key,
      body: { model: "gpt-4o-mini", max_tokens: 20, messages: user("hello") },
    });
    expect(r.status).toBe(200);
    const ends = await Promise.all(streams);
    // Exactly one stream (a's newest) was cut short; the others ran to [DONE].
    expect(ends.map((e) => e.done)).toEqual([true, true, false, true]);
    expect(ends[2]!.bytes).toBeGreaterThan(0);
    await Bun.sleep(200);
    const books = await checkBooks(g.gw.deps.db, [a.user.id, b.user.id, victim.user.id]);
    expect(books.violations).toEqual([]);
    expect(books.openHolds).toBe(0);
    expect(books.usageEvents).toBe(5);
    // The cut stream was charged (what it delivered), not released for free.
    expect(books.settledHolds).toBe(5);
  });
});
