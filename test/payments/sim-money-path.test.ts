/**
 * Buying credits end to end through the simulator's payment provider, over real HTTP, on
 * PostgreSQL and PGlite: a checkout at the gateway, the simulator's checkout page paid, the
 * return confirmed server-side, the simulator's webhook; the books in SQL. Then what must
 * credit nothing extra: the webhook replayed, the return reloaded (a double click), eight
 * concurrent deliveries; a declined card and a canceled checkout recorded; a refund taken back
 * once; a forged webhook refused; the history and its CSV; the fee shown before paying.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { ADMIN_TOKEN, dbKinds, startTestGateway, type TestGateway } from "../harness";
import { fastUser } from "../support/http";

/** The browser's part: open the checkout page, submit its form; the Location it is sent to. */
async function payAtSim(checkoutUrl: string, card = "4242424242424242", action = "pay"): Promise<string> {
  const page = await fetch(checkoutUrl);
  expect(page.status).toBe(200);
  expect(await page.text()).toContain("Simulated checkout");
  const r = await fetch(`${checkoutUrl}/${action}`, {
    method: "POST",
    body: new URLSearchParams({ card }),
    redirect: "manual",
  });
  expect(r.status).toBe(303);
  return r.headers.get("location")!;
}

/** Follows the provider's redirect to the gateway's /billing/return; the console page it lands on. */
async function returnTo(location: string): Promise<URLSearchParams> {
  const r = await fetch(location, { redirect: "manual" });
  expect(r.status).toBe(303);
  const to = r.headers.get("location")!;
  expect(to.startsWith("/#/billing/result?")).toBe(true);
  return new URLSearchParams(to.split("?")[1]);
}

async function until<T>(f: () => Promise<T>, ok: (v: T) => boolean): Promise<T> {
  for (let i = 0; i < 200; i++) {
    const v = await f();
    if (ok(v)) return v;
    await Bun.sleep(25);
  }
  return f();
}

for (const kind of await dbKinds()) {
  describe(`self-service credits through the simulator's provider on ${kind}`, () => {
    let g: TestGateway;
    beforeAll(async () => {
      g = await startTestGateway({ db: kind, env: { VIDEO_POLL_WORKERS: "0" } });
    }, 60_000);
    afterAll(() => g?.stop());

    const books = async (userId: string) => {
      const [u] = await g.gw.deps.db.query<{ b: string }>("select balance_micro::text as b from users where id = $1", [
        userId,
      ]);
      const entries = await g.gw.deps.db.query<{ kind: string; amount_micro: string }>(
        "select kind, amount_micro::text from ledger_entries where user_id = $1 order by id",
        [userId],
      );
      return { balance: BigInt(u!.b), entries: entries.map((e) => `${e.kind} ${e.amount_micro}`) };
    };
    const payment = async (orderId: string) =>
      (
        await g.gw.deps.db.query<any>(
          "select status, amount_krw::int as paid, fee_krw::int as fee, credit_micro::text as credit, refunded_krw::int as refunded, provider_payment_id, failure_code from payments where order_id = $1",
          [orderId],
        )
      )[0];
    const checkout = async (jwt: string, amount: number) => {
      const r = await g.call("POST", "/v1/billing/checkout", { token: jwt, body: { amount_krw: amount } });
      expect(r.status).toBe(201);
      return r.body;
    };
    const webhooks = async () =>
      (
        await fetch(`${g.gw.sim!.baseUrl("payments")}/v1/_webhooks`, {
          headers: { authorization: "Basic c2s6" },
        })
      ).json() as Promise<{ url: string; body: string }[]>;

    test("the 402's action path leads to the console's billing page", async () => {
      const r = await fetch(`${g.url}/billing`, { redirect: "manual" });
      expect([r.status, r.headers.get("location")]).toEqual([303, "/#/billing"]);
    });

    test("the page's figures: the provider, the 3 % fee and the limits", async () => {
      const u = await fastUser(g);
      const r = await g.call("GET", "/v1/billing", { token: u.jwt });
      expect(r.status).toBe(200);
      expect(r.body).toEqual({
        provider: "sim",
        topups: "self_service",
        fee_percent: 3,
        min_krw: 1000,
        max_krw: 10_000_000,
        balance_krw: 0,
      });
      const below = await g.call("POST", "/v1/billing/checkout", { token: u.jwt, body: { amount_krw: 999 } });
      expect(below.status).toBe(422);
      expect((await g.call("POST", "/v1/billing/checkout", { body: { amount_krw: 5000 } })).status).toBe(401);
    });

    test("buy ₩10,000: ₩300 fee, ₩9,700 credited once; the webhook, its replay and a reload credit nothing more", async () => {
      const u = await fastUser(g);
      const c = await checkout(u.jwt, 10_000);
      expect(c).toMatchObject({ paid_krw: 10_000, fee_krw: 300, credited_krw: 9_700, checkout: { type: "redirect" } });
      expect(await payment(c.order_id)).toMatchObject({ status: "pending", paid: 10_000, fee: 300 });
      expect((await books(u.id)).balance).toBe(0n);

      const back = await payAtSim(c.checkout.url);
      const result = await returnTo(back);
      expect(result.get("status")).toBe("paid");
      expect(result.get("order_id")).toBe(c.order_id);
      // The simulator's webhook arrives after the confirm; it finds the order paid.
      const hooks = await until(webhooks, (w) => w.some((h) => h.body.includes(c.order_id)));
      const hook = hooks.find((h) => h.body.includes(c.order_id))!;
      // Replays, and the return reloaded (a double click on the way back), all at once.
      const again = await Promise.all([
        ...Array.from({ length: 4 }, () =>
          fetch(hook.url, { method: "POST", headers: { "content-type": "application/json" }, body: hook.body }),
        ),
        fetch(back, { redirect: "manual" }),
        fetch(back, { redirect: "manual" }),
      ]);
      expect(again.map((r) => r.status)).toEqual([200, 200, 200, 200, 303, 303]);
      expect(await books(u.id)).toEqual({ balance: 9_700_000_000n, entries: ["topup 9700000000"] });
      expect(await payment(c.order_id)).toMatchObject({ status: "paid", credit: "9700000000" });
      const seen = await g.call("GET", `/v1/billing/payments/${c.order_id}`, { token: u.jwt });
      expect(seen.body).toMatchObject({ status: "paid", paid_krw: 10_000, fee_krw: 300, credited_krw: 9_700 });
      // Another account cannot read it.
      const other = await fastUser(g);
      expect((await g.call("GET", `/v1/billing/payments/${c.order_id}`, { token: other.jwt })).status).toBe(404);
    });

    test("eight concurrent webhooks and returns for one payment credit once", async () => {
      const u = await fastUser(g);
      const c = await checkout(u.jwt, 50_000);
      const back = await payAtSim(c.checkout.url);
      const q = new URL(back).searchParams;
      // Confirmed at the provider by someone else's hand (as if our own confirm had been lost),
      // then every path that can credit races: returns and the webhook, together.
      const confirm = await fetch(`${g.gw.sim!.baseUrl("payments")}/v1/payments/confirm`, {
        method: "POST",
        headers: { authorization: "Basic c2s6", "content-type": "application/json" },
        body: JSON.stringify({ paymentKey: q.get("paymentKey"), orderId: c.order_id, amount: 50_000 }),
      });
      expect(confirm.status).toBe(200);
      const hook = (await until(webhooks, (w) => w.some((h) => h.body.includes(c.order_id)))).find((h) =>
        h.body.includes(c.order_id),
      )!;
      await Promise.all(
        Array.from({ length: 8 }, (_, i) =>
          i % 2
            ? fetch(back, { redirect: "manual" })
            : fetch(hook.url, { method: "POST", headers: { "content-type": "application/json" }, body: hook.body }),
        ),
      );
      expect(await books(u.id)).toEqual({ balance: 48_500_000_000n, entries: ["topup 48500000000"] });
    });

    test("a declined card and a canceled checkout are recorded and credit nothing", async () => {
      const u = await fastUser(g);
      const declined = await checkout(u.jwt, 20_000);
      const r1 = await returnTo(await payAtSim(declined.checkout.url, "4000000000000002"));
      expect(r1.get("status")).toBe("failed");
      expect(await payment(declined.order_id)).toMatchObject({ status: "failed", failure_code: "REJECT_CARD_PAYMENT" });
      const canceled = await checkout(u.jwt, 20_000);
      const r2 = await returnTo(await payAtSim(canceled.checkout.url, "", "cancel"));
      expect(r2.get("status")).toBe("canceled");
      expect(await payment(canceled.order_id)).toMatchObject({
        status: "canceled",
        failure_code: "PAY_PROCESS_CANCELED",
      });
      expect(await books(u.id)).toEqual({ balance: 0n, entries: [] });
    });

    test("a tampered return (another amount) confirms nothing and credits nothing", async () => {
      const u = await fastUser(g);
      const c = await checkout(u.jwt, 30_000);
      const back = new URL(await payAtSim(c.checkout.url));
      back.searchParams.set("amount", "300000");
      const r = await returnTo(back.toString());
      expect([r.get("status"), r.get("code")]).toEqual(["error", "payment_unverified"]);
      expect(await payment(c.order_id)).toMatchObject({ status: "pending" });
      expect(await books(u.id)).toEqual({ balance: 0n, entries: [] });
    });

    test("a forged webhook (a payment the provider does not know, or another order's) is refused", async () => {
      const u = await fastUser(g);
      const c = await checkout(u.jwt, 10_000);
      const forged = (data: object) =>
        g.call("POST", "/v1/billing/webhooks/sim", {
          raw: JSON.stringify({ eventType: "PAYMENT_STATUS_CHANGED", data }),
          headers: { "content-type": "application/json" },
        });
      const unknown = await forged({ paymentKey: "simpk_forged", orderId: c.order_id, status: "DONE" });
      expect(unknown.status).toBe(400);
      expect(unknown.body.detail.error).toBe("payment_unverified");
      // A real payment of another order, claimed for this one: the read-back disagrees.
      const other = await checkout(u.jwt, 1_000);
      const key = new URL(await payAtSim(other.checkout.url)).searchParams.get("paymentKey");
      const wrong = await forged({ paymentKey: key, orderId: c.order_id, status: "DONE" });
      expect(wrong.status).toBe(400);
      expect((await g.call("POST", "/v1/billing/webhooks/stripe", { raw: "{}" })).status).toBe(400);
      // Anyone may post here: a body past 256 KB is refused unread.
      expect((await g.call("POST", "/v1/billing/webhooks/sim", { raw: "x".repeat(300_000) })).status).toBe(413);
      expect(await books(u.id)).toEqual({ balance: 0n, entries: [] });
    });

    test("a refund takes the credit share back once; history and CSV show the fee, the refund and the balance", async () => {
      const u = await fastUser(g);
      const c = await checkout(u.jwt, 10_000);
      await returnTo(await payAtSim(c.checkout.url));
      const refund = (amount: number) =>
        g.call("POST", `/v1/admin/payments/${c.order_id}/refunds`, {
          token: ADMIN_TOKEN,
          body: { amount_krw: amount, reason: "test" },
        });
      const r = await refund(4_000);
      expect(r.status).toBe(200);
      expect(r.body).toMatchObject({ status: "partially_refunded", refunded_krw: 4_000 });
      // 9,700 × 4,000 / 10,000 = 3,880 taken back; the provider's webhook of that refund changes nothing.
      await until(webhooks, (w) => w.filter((h) => h.body.includes(c.order_id)).length >= 2);
      await Bun.sleep(100);
      expect(await books(u.id)).toEqual({
        balance: 5_820_000_000n,
        entries: ["topup 9700000000", "refund -3880000000"],
      });
      const h = await g.call("GET", "/v1/billing/history", { token: u.jwt });
      expect(h.body.items.map((i: any) => [i.type, i.paid_krw, i.fee_krw, i.amount_krw, i.balance_krw])).toEqual([
        ["refund", null, null, "-3880", "5820"],
        ["topup", 10_000, 300, "9700", "9700"],
      ]);
      const csv = await fetch(`${g.url}/v1/billing/history?format=csv`, {
        headers: { authorization: `Bearer ${u.jwt}` },
      });
      expect(csv.headers.get("content-type")).toBe("text/csv; charset=utf-8");
      const lines = (await csv.text()).trim().split("\r\n");
      expect(lines[0]).toBe("at,type,order_id,provider,paid_krw,fee_krw,amount_krw,balance_krw,failure_code");
      expect(lines[2]).toEndWith(`,topup,${c.order_id},sim,10000,300,9700,9700,`);
    });
  });
}

describe("without a payment provider outside demo mode", () => {
  let g: TestGateway;
  beforeAll(async () => {
    g = await startTestGateway({ env: { SIMULATOR: "off", VIDEO_POLL_WORKERS: "0" } });
  }, 60_000);
  afterAll(() => g?.stop());

  test("the API says top-ups are by the operator", async () => {
    const u = await fastUser(g);
    const info = await g.call("GET", "/v1/billing", { token: u.jwt });
    expect(info.body).toMatchObject({ provider: null, topups: "operator" });
    const r = await g.call("POST", "/v1/billing/checkout", {
      token: u.jwt,
      body: { amount_krw: 10_000 },
      headers: { "accept-language": "en" },
    });
    expect(r.status).toBe(503);
    expect(r.body.detail).toMatchObject({ error: "payments_not_configured", retryable: false });
    expect(r.body.detail.message).toContain("Ask the operator");
    expect((await g.call("POST", "/v1/billing/webhooks/toss", { raw: "{}" })).body.detail.error).toBe(
      "payments_not_configured",
    );
  });
});
