/**
 * Auto top-up through the simulator's provider (Toss's billing-key API), on PostgreSQL and
 * PGlite: off by default; a card saved at the provider; on, with a threshold and an amount;
 * the job charges the saved card once when the free credit falls under the threshold (the
 * order, the fee and the credit as a checkout's); a card that declines turns it off with the
 * reason. The books are read in SQL.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { dbKinds, startTestGateway, type TestGateway } from "../harness";
import { fastUser } from "../support/http";

async function until<T>(f: () => Promise<T>, ok: (v: T) => boolean): Promise<T> {
  for (let i = 0; i < 200; i++) {
    const v = await f();
    if (ok(v)) return v;
    await Bun.sleep(25);
  }
  return f();
}

for (const kind of await dbKinds()) {
  describe(`auto top-up on ${kind}`, () => {
    let g: TestGateway;
    beforeAll(async () => {
      g = await startTestGateway({ db: kind, env: { VIDEO_POLL_WORKERS: "0", AUTO_TOPUP_INTERVAL_MS: "50" } });
    }, 60_000);
    afterAll(() => g?.stop());

    const books = async (userId: string) => {
      const [r] = await g.gw.deps.db.query<{ balance: string; topups: string[] | null; orders: string[] | null }>(
        `select (select balance_micro::text from users where id = $1) as balance,
                (select array_agg(amount_micro::text order by id) from ledger_entries where user_id = $1 and kind = 'topup') as topups,
                (select array_agg(status || ' ' || amount_krw || ' ' || fee_krw order by created_at) from payments where user_id = $1) as orders`,
        [userId],
      );
      return r!;
    };
    /** Saves a card through the simulator's registration page, as the browser would. */
    const saveCard = async (jwt: string, card: string) => {
      const r = await g.call("POST", "/v1/billing/auto-topup/card", { token: jwt });
      expect(r.status).toBe(201);
      expect(r.body.checkout.type).toBe("redirect");
      expect((await fetch(r.body.checkout.url)).status).toBe(200);
      const saved = await fetch(`${r.body.checkout.url}/save`, {
        method: "POST",
        body: new URLSearchParams({ card }),
        redirect: "manual",
      });
      const back = await fetch(saved.headers.get("location")!, { redirect: "manual" });
      return back.headers.get("location");
    };
    const configure = (jwt: string, body: object) => g.call("PUT", "/v1/billing/auto-topup", { token: jwt, body });

    test("off by default; on needs a saved card", async () => {
      const u = await fastUser(g);
      const r = await g.call("GET", "/v1/billing/auto-topup", { token: u.jwt });
      expect(r.body).toEqual({
        supported: true,
        enabled: false,
        threshold_krw: 0,
        amount_krw: 0,
        card: null,
        last_error: null,
      });
      const on = await configure(u.jwt, { enabled: true, threshold_krw: 5_000, amount_krw: 10_000 });
      expect([on.status, on.body.detail.error]).toEqual([409, "conflict"]);
    });

    test("under the threshold, the saved card is charged once: ₩10,000 paid, ₩9,700 credited", async () => {
      const u = await fastUser(g, { creditKrw: 6_000 });
      expect(await saveCard(u.jwt, "4242424242424242")).toBe("/#/billing?card=saved");
      const saved = await g.call("GET", "/v1/billing/auto-topup", { token: u.jwt });
      expect(saved.body).toMatchObject({ enabled: false, card: "4242********4242" });
      // Above the threshold: nothing happens.
      expect((await configure(u.jwt, { enabled: true, threshold_krw: 5_000, amount_krw: 10_000 })).status).toBe(200);
      await Bun.sleep(300);
      expect((await books(u.id)).orders).toBeNull();
      // The threshold raised above the free credit: the next pass charges the card.
      expect((await configure(u.jwt, { enabled: true, threshold_krw: 7_000, amount_krw: 10_000 })).status).toBe(200);
      const after = await until(
        () => books(u.id),
        (b) => b.balance !== "6000000000",
      );
      await Bun.sleep(300); // later passes find it above the threshold again
      expect(await books(u.id)).toEqual({
        balance: "15700000000",
        topups: ["6000000000", "9700000000"],
        orders: ["paid 10000 300"],
      });
      expect(after.balance).toBe("15700000000");
      const h = await g.call("GET", "/v1/billing/history", { token: u.jwt });
      expect(h.body.items[0]).toMatchObject({ type: "topup", paid_krw: 10_000, fee_krw: 300, balance_krw: "15700" });
    });

    test("a card that declines is recorded and turns auto top-up off with the reason", async () => {
      const u = await fastUser(g);
      await saveCard(u.jwt, "5555555555550051");
      expect((await configure(u.jwt, { enabled: true, threshold_krw: 5_000, amount_krw: 10_000 })).status).toBe(200);
      const off = await until(
        async () => (await g.call("GET", "/v1/billing/auto-topup", { token: u.jwt })).body,
        (b) => !b.enabled,
      );
      expect(off.last_error).toStartWith("REJECT_CARD_PAYMENT");
      expect(await books(u.id)).toMatchObject({ balance: "0", topups: null, orders: ["failed 10000 300"] });
      // Removing the card forgets it.
      expect((await g.call("DELETE", "/v1/billing/auto-topup/card", { token: u.jwt })).status).toBe(204);
      expect((await g.call("GET", "/v1/billing/auto-topup", { token: u.jwt })).body.card).toBeNull();
    });
  });
}
