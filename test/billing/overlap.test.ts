/**
 * The ledger's round trips off the answer's path (src/core/billing/settlements.ts,
 * hold-estimate.ts): the settle lands behind the answer, yet the account sees its charge at
 * once; the hold travels alongside the upstream call only when the ledger's last answers say
 * it will pass, and a hold refused on the way aborts that call and answers the usual 402.
 */
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { dbKinds, suiteGateway } from "../harness";
import { chat, chatFetch, errorCode, krwMicro, money, tenant, totalChatCalls, user } from "../support/chat";

setDefaultTimeout(20_000);

for (const kind of await dbKinds()) {
  describe(`hold and settle off the answer's path (${kind})`, () => {
    const gateway = suiteGateway({ db: kind });

    test("every answer's charge is in the account the moment the answer is read", async () => {
      const g = gateway();
      const { user: u, key } = await tenant(g, 1000);
      let last = 1000_000_000n;
      for (let i = 0; i < 8; i++) {
        const r = await chat(g, key.key, { model: "gpt-4o-mini", messages: user(`call ${i}`), max_tokens: 50 });
        expect(r.status).toBe(200);
        // Read through the dashboard at once: nothing is still held, this call's charge is in.
        const me = await g.call("GET", "/v1/me", { token: u.jwt });
        expect(me.status).toBe(200);
        expect(me.body.held_krw).toBe(0);
        const balance = krwMicro(me.body.balance_krw);
        expect(balance).toBeLessThan(last);
        last = balance;
      }
      expect(await money(g, u.id)).toEqual({ balance: last, held: 0n });
    });

    for (const stream of [false, true]) {
      test(`a hold refused on its way aborts the upstream call and answers 402${stream ? " (stream request)" : ""}`, async () => {
        const g = gateway();
        const { user: u, key } = await tenant(g, 1000);
        // One paid call teaches the gateway the key's room: the next one overlaps its hold.
        expect((await chat(g, key.key, { model: "gpt-4o-mini", messages: user("warm"), max_tokens: 20 })).status).toBe(
          200,
        );
        expect(
          g.gw.ledger.begin(
            {
              id: crypto.randomUUID(),
              userId: u.id,
              keyId: key.id,
              amountMicro: 1_000_000n,
              tokens: 100,
              ttlSeconds: 60,
            },
            true,
          ),
        ).toBe("alongside");
        // The credits go elsewhere meanwhile (another instance, say): the estimate is now wrong.
        await g.gw.settlements.quiesce(u.id);
        await g.gw.deps.db.query("update users set balance_micro = 0 where id = $1", [u.id]);
        const calls = totalChatCalls(g);
        const t0 = performance.now();
        const r = await chatFetch(g, key.key, {
          model: "gpt-4o-mini",
          messages: user("slow [sim:latency=3000]"),
          max_tokens: 20,
          stream,
        });
        const ms = performance.now() - t0;
        expect(r.status).toBe(402);
        expect(r.headers.get("content-type")).toContain("application/json");
        expect(errorCode(await r.json())).toBe("insufficient_credits");
        // The 402 did not wait for the provider's three seconds: the call was cut short.
        expect(ms).toBeLessThan(2000);
        // At most this one call left (whether it reached the provider before the abort depends on
        // how fast the refusal came), and nothing was held or charged.
        expect(totalChatCalls(g)).toBeLessThanOrEqual(calls + 1);
        expect(await money(g, u.id)).toEqual({ balance: 0n, held: 0n });
      });
    }

    test.skipIf(kind !== "pg")(
      "the upstream call leaves while the hold waits, and the answer waits for the hold",
      async () => {
        const g = gateway();
        const { user: u, key } = await tenant(g, 1000);
        expect((await chat(g, key.key, { model: "gpt-4o-mini", messages: user("warm"), max_tokens: 20 })).status).toBe(
          200,
        );
        await g.gw.settlements.quiesce(u.id);
        const before = await money(g, u.id);
        // Another transaction holds the account's row for 600 ms: the next hold must wait for it.
        const lock = g.gw.deps.db.query(
          "with l as (select id from users where id = $1 for update) select pg_sleep(0.6) from l",
          [u.id],
        );
        await Bun.sleep(50);
        const calls = totalChatCalls(g);
        let answered = false;
        const t0 = performance.now();
        const reply = chat(g, key.key, { model: "gpt-4o-mini", messages: user("overlap"), max_tokens: 20 }).then(
          (r) => {
            answered = true;
            return r;
          },
        );
        await Bun.sleep(250);
        // The provider has the request already; the client has nothing yet.
        expect(totalChatCalls(g)).toBe(calls + 1);
        expect(answered).toBe(false);
        await lock;
        const r = await reply;
        expect(r.status).toBe(200);
        expect(performance.now() - t0).toBeGreaterThan(400);
        const after = await money(g, u.id);
        expect(after.held).toBe(0n);
        expect(after.balance).toBeLessThan(before.balance);
      },
    );

    test("one call after another near a limit: a call that fits once the previous ones settled is never refused", async () => {
      const g = gateway();
      // Each call holds ~33 tokens (estimated input + max_tokens 20) and uses 21: with a limit of
      // 100, one by one, four fit (63 used + 33 held ≤ 100) and the fifth does not (84 + 33).
      // The previous call's settle may still be on its way when the next hold arrives; the
      // gateway re-checks a refusal after the account's settles land.
      for (let round = 0; round < 3; round++) {
        const { user: u } = await tenant(g, 100);
        const k = await g.newKey(u, { monthly_token_limit: 100 });
        const statuses: number[] = [];
        for (let i = 0; i < 6; i++)
          statuses.push((await chat(g, k.key, { model: "gpt-4o-mini", messages: user("q"), max_tokens: 20 })).status);
        expect(statuses).toEqual([200, 200, 200, 200, 402, 402]);
      }
    });

    test("an account the ledger has not answered for, or that cannot pay, never reaches a provider", async () => {
      const g = gateway();
      const { user: u, key } = await tenant(g, 0);
      const calls = totalChatCalls(g);
      for (let i = 0; i < 3; i++) {
        const r = await chat(g, key.key, { model: "gpt-4o-mini", messages: user(`broke ${i}`), max_tokens: 20 });
        expect(r.status).toBe(402);
      }
      expect(totalChatCalls(g)).toBe(calls);
      expect(await money(g, u.id)).toEqual({ balance: 0n, held: 0n });
    });
  });
}
