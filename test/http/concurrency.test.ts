/**
 * Concurrency limits: model calls in flight per key and per account.
 * A call past a limit is refused before anything is held or sent upstream, with 429
 * `concurrency_limit_exceeded` and Retry-After, and is not charged; the slot of a call comes
 * back on every way it can end (answer, error, upstream failure, upstream drop mid-stream,
 * client abort mid-stream or while waiting for the first byte).
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { dbKinds, startTestGateway, type TestGateway } from "../harness";
import { chatFetch, eventually, tenant, user } from "../support/chat";
import { checkBooks } from "../support/books";

setDefaultTimeout(60_000);

const body = (content: string, extra: Record<string, unknown> = {}) => ({
  model: "gpt-4o-mini",
  max_tokens: 20,
  messages: user(content),
  ...extra,
});

function expectConcurrencyRefusal(r: { status: number; body: any; headers: Headers }) {
  expect(r.status).toBe(429);
  expect(r.body).toEqual({
    detail: { error: "concurrency_limit_exceeded", message: expect.any(String), retryable: true },
    error: { message: expect.any(String), type: "rate_limit_error", code: "concurrency_limit_exceeded", param: null },
  });
  expect(Number(r.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
}

for (const kind of await dbKinds()) {
  describe(`concurrency limits on ${kind}`, () => {
    let g: TestGateway;
    beforeAll(async () => {
      g = await startTestGateway({ db: kind, env: { CONCURRENCY_PER_KEY: "2", CONCURRENCY_PER_ACCOUNT: "3" } });
    }, 60_000);
    afterAll(async () => {
      await g?.stop();
    });

    test("calls past a key's and an account's limit get 429 with Retry-After and are not charged", async () => {
      const t = await tenant(g, 1000);
      const second = await g.newKey(t.user);
      const third = await g.newKey(t.user);
      // Two slow streams fill the first key; a third call of that key is refused.
      const slow = [0, 1].map((i) =>
        chatFetch(g, t.key.key, body(`slow ${i} [sim:latency=1200]`, { stream: true })).then(async (r) => ({
          status: r.status,
          text: await r.text(),
        })),
      );
      await Bun.sleep(250);
      const overKey = await g.call("POST", "/v1/chat/completions", {
        token: t.key.key,
        body: body("one too many for the key"),
      });
      expectConcurrencyRefusal(overKey);
      // Another key of the account has room (2 + 1 of the account's 3)...
      const slowOther = g.call("POST", "/v1/chat/completions", {
        token: second.key,
        body: body("third of the account [sim:latency=800]"),
      });
      await Bun.sleep(150);
      // ...after which the account is full, whichever key asks: chat, Responses and video alike.
      const overAccount = [
        await g.call("POST", "/v1/chat/completions", { token: third.key, body: body("one too many for the account") }),
        await g.call("POST", "/v1/responses", {
          token: third.key,
          body: { model: "gpt-4o-mini", input: "one too many", max_output_tokens: 20 },
        }),
        await g.call("POST", "/v1/video/generations", {
          token: third.key,
          body: { model: "kling-v3", prompt: "a kite", duration_seconds: 5 },
        }),
      ];
      for (const r of overAccount) expectConcurrencyRefusal(r);
      // Another account is not affected.
      const other = await tenant(g, 100);
      expect(
        (await g.call("POST", "/v1/chat/completions", { token: other.key.key, body: body("another tenant") })).status,
      ).toBe(200);

      for (const s of await Promise.all(slow)) {
        expect(s.status).toBe(200);
        expect(s.text).toContain("[DONE]");
      }
      expect((await slowOther).status).toBe(200);
      // Once they ended, the slots are back.
      expect(
        (await g.call("POST", "/v1/chat/completions", { token: t.key.key, body: body("room again") })).status,
      ).toBe(200);

      // The books: the refused calls left nothing (no hold, no usage event, no charge).
      await g.gw.settlements.quiesce();
      const refusedIds = [overKey, ...overAccount].map((r) => r.headers.get("x-request-id"));
      const traces = await g.gw.deps.db.query<{ n: number }>(
        `select ((select count(*) from holds where id::text = any($1::text[])) + (select count(*) from usage_events where request_id::text = any($1::text[])) + (select count(*) from ledger_entries where request_id::text = any($1::text[])))::int as n`,
        [refusedIds],
      );
      expect(traces[0]!.n).toBe(0);
      const books = await checkBooks(g.gw.deps.db, [t.user.id, other.user.id]);
      expect(books.violations).toEqual([]);
      expect(books.usageEvents).toBe(5); // 2 streams + 1 on the second key + 1 after + the other tenant's
    });

    test("a slot comes back on every way a call ends", async () => {
      const t = await tenant(g, 1000);
      const k = t.key.key;
      // Two slow calls of another key of the account leave it exactly one free slot (of 3):
      // a slot that did not come back shows as a 429 on the next call.
      const hold = await g.newKey(t.user);
      const busy = [0, 1].map((i) =>
        g.call("POST", "/v1/chat/completions", { token: hold.key, body: body(`busy ${i} [sim:latency=8000]`) }),
      );
      await Bun.sleep(200);
      const endsThenFree = async (run: () => Promise<unknown>) => {
        await run();
        // The next call gets the slot: at once, or as soon as the client's abort has been seen.
        const ok = await eventually(
          async () => (await g.call("POST", "/v1/chat/completions", { token: k, body: body("next") })).status === 200,
          3000,
          50,
        );
        expect(ok).toBe(true);
      };

      // Answered, JSON and streamed.
      await endsThenFree(async () =>
        expect((await g.call("POST", "/v1/chat/completions", { token: k, body: body("plain") })).status).toBe(200),
      );
      await endsThenFree(async () =>
        expect(await (await chatFetch(g, k, body("streamed", { stream: true }))).text()).toContain("[DONE]"),
      );
      // Refused for the client's own mistake.
      await endsThenFree(async () =>
        expect(
          (await g.call("POST", "/v1/chat/completions", { token: k, body: body("x", { model: "no-such-model" }) }))
            .status,
        ).toBe(400),
      );
      // The upstream failed, before the first byte and mid-stream.
      await endsThenFree(async () =>
        expect(
          (await g.call("POST", "/v1/chat/completions", { token: k, body: body("fails [sim:fail=400]") })).status,
        ).toBe(502),
      );
      await endsThenFree(async () =>
        expect(
          await (
            await chatFetch(g, k, body("drops [sim:tokens=200] [sim:drop=2]", { stream: true, max_tokens: 400 }))
          ).text(),
        ).toContain("upstream_error"),
      );
      // The client left mid-stream, and while waiting for the first byte.
      await endsThenFree(async () => {
        const ac = new AbortController();
        const res = await chatFetch(
          g,
          k,
          body("long [sim:tokens=400] [sim:chunk_ms=200]", { stream: true, max_tokens: 500 }),
          { signal: ac.signal },
        );
        await res.body!.getReader().read();
        ac.abort();
      });
      await endsThenFree(async () => {
        const ac = new AbortController();
        const pending = chatFetch(g, k, body("never mind [sim:latency=5000]", { stream: true }), {
          signal: ac.signal,
        }).catch(() => null);
        await Bun.sleep(200);
        ac.abort();
        await pending;
      });
      for (const r of await Promise.all(busy)) expect(r.status).toBe(200);

      // Refused for money, more times than the key has slots: each refusal gave its slot back.
      const poor = await tenant(g, 0);
      for (let i = 0; i < 4; i++)
        expect(
          (await g.call("POST", "/v1/chat/completions", { token: poor.key.key, body: body(`no money ${i}`) })).status,
        ).toBe(402);
    });
  });
}

describe("the process budget is shared fairly (no per-account limit)", () => {
  let g: TestGateway;
  beforeAll(async () => {
    g = await startTestGateway({
      db: "pglite",
      env: { UPSTREAM_MAX_CONCURRENT: "8", CONCURRENCY_PER_ACCOUNT: "0", CONCURRENCY_PER_KEY: "0" },
    });
  }, 60_000);
  afterAll(async () => {
    await g?.stop();
  });

  test("one account gets 3/4 of a budget of 8 and no more; another tenant's calls take the rest at once", async () => {
    const heavy = await tenant(g, 1000);
    const light = await tenant(g, 1000);
    const heavyCalls = Array.from({ length: 12 }, (_, i) =>
      g.call("POST", "/v1/chat/completions", { token: heavy.key.key, body: body(`heavy ${i} [sim:latency=1500]`) }),
    );
    await Bun.sleep(300);
    // The two slots the heavy account could not take are the light tenant's, at once.
    const t0 = performance.now();
    const fast = await Promise.all(
      [0, 1].map((i) => g.call("POST", "/v1/chat/completions", { token: light.key.key, body: body(`light ${i}`) })),
    );
    for (const r of fast) expect(r.status).toBe(200);
    expect(performance.now() - t0).toBeLessThan(1000);
    const done = await Promise.all(heavyCalls);
    expect(done.filter((r) => r.status === 200).length).toBe(6);
    for (const r of done.filter((r) => r.status !== 200)) expectConcurrencyRefusal(r);
  });

  test("with the budget full, a tenant under its share takes the over-share account's newest slot at once", async () => {
    const heavy = await tenant(g, 1000);
    const light = await tenant(g, 1000);
    const heavyCalls = Array.from({ length: 6 }, (_, i) =>
      g.call("POST", "/v1/chat/completions", { token: heavy.key.key, body: body(`heavy ${i} [sim:latency=1000]`) }),
    );
    await Bun.sleep(200);
    const lightCalls = Array.from({ length: 3 }, (_, i) =>
      g.call("POST", "/v1/chat/completions", { token: light.key.key, body: body(`light ${i} [sim:latency=1000]`) }),
    );
    // 6 + 2 fill the budget; the light tenant's third call pre-empts the heavy account's newest
    // (6 over its share of 4), which is answered 429 and not charged.
    for (const r of await Promise.all(lightCalls)) expect(r.status).toBe(200);
    const heavyDone = await Promise.all(heavyCalls);
    expect(heavyDone.filter((r) => r.status === 200).length).toBe(5);
    for (const r of heavyDone.filter((r) => r.status !== 200)) expectConcurrencyRefusal(r);
    const books = await checkBooks(g.gw.deps.db, [heavy.user.id, light.user.id]);
    expect(books.violations).toEqual([]);
    // The pre-empted call's hold is released whole: 8 calls settled, 1 released, nothing open.
    expect(books.settledHolds).toBe(8);
    expect(books.releasedHolds).toBe(1);
    expect(books.openHolds).toBe(0);
    expect(g.gw.deps.calls.admission.running).toBe(0);
  });
});
