/**
 * The Toss Payments adapter through the gateway, against recorded Toss answers served over
 * HTTP (test/fixtures/payments/toss): the widget's checkout data, the confirm with Basic auth
 * of the secret key, a success, a declined card, a canceled checkout, a duplicate confirm
 * (ALREADY_PROCESSED_PAYMENT, read back), a refund webhook, an amount mismatch and forged
 * webhooks (the read-back disagrees or knows no payment). The books are read in SQL.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestGateway, type TestGateway } from "../harness";
import { fastUser } from "../support/http";
import { RecordedProvider, sample } from "./recorded";

const SECRET = "test_gsk_docs_OaPz8L5KdmQXkzRz3y47BMw6";
const CLIENT = "test_gck_docs_Ovk5rk1EwkEbP0W43n07xlzm";

describe("Toss Payments against recorded answers", () => {
  let g: TestGateway;
  let toss: RecordedProvider;
  beforeAll(async () => {
    toss = new RecordedProvider();
    g = await startTestGateway({
      env: {
        PAYMENTS_PROVIDER: "toss",
        TOSS_CLIENT_KEY: CLIENT,
        TOSS_SECRET_KEY: SECRET,
        TOSS_API_BASE: toss.url,
        VIDEO_POLL_WORKERS: "0",
      },
    });
  }, 60_000);
  afterAll(async () => {
    await g?.stop();
    await toss?.stop();
  });

  const balance = async (userId: string) =>
    (await g.gw.deps.db.query<{ b: string }>("select balance_micro::text as b from users where id = $1", [userId]))[0]!
      .b;
  const status = async (orderId: string) =>
    (
      await g.gw.deps.db.query<{ status: string; failure_code: string | null; refunded_krw: string }>(
        "select status, failure_code, refunded_krw::text from payments where order_id = $1",
        [orderId],
      )
    )[0]!;
  const order = async (jwt: string, amount: number) => {
    const r = await g.call("POST", "/v1/billing/checkout", { token: jwt, body: { amount_krw: amount } });
    expect(r.status).toBe(201);
    return r.body;
  };
  /** The browser coming back from Toss's widget to the success or fail URL it was given. */
  const back = async (url: string, q: Record<string, string>) => {
    const u = new URL(url);
    for (const [k, v] of Object.entries(q)) u.searchParams.set(k, v);
    const r = await fetch(u, { redirect: "manual" });
    return new URLSearchParams(r.headers.get("location")!.split("?")[1]);
  };
  const webhook = (vars: Record<string, string | number>) =>
    g.call("POST", "/v1/billing/webhooks/toss", {
      raw: sample("toss/webhook-status-changed.json", vars),
      headers: { "content-type": "application/json" },
    });

  test("success: the widget's data, the confirm with the secret key, ₩9,700 credited", async () => {
    const u = await fastUser(g);
    const c = await order(u.jwt, 10_000);
    expect(c.checkout).toMatchObject({
      type: "toss_widget",
      client_key: CLIENT,
      order_id: c.order_id,
      amount_krw: 10_000,
    });
    expect(c.checkout.customer_key).toMatch(/^c_[0-9a-f]{40}$/);
    const vars = { paymentKey: "tgen_20261207120000aBcD1", orderId: c.order_id, amount: 10_000 };
    toss.answer("POST", /^\/v1\/payments\/confirm$/, 200, "toss/payment-done.json", () => vars);
    const r = await back(c.checkout.success_url, { paymentKey: vars.paymentKey, orderId: c.order_id, amount: "10000" });
    expect(r.get("status")).toBe("paid");
    const sent = toss.last("POST", /confirm$/)!;
    expect(sent.headers.get("authorization")).toBe(`Basic ${Buffer.from(`${SECRET}:`).toString("base64")}`);
    expect(JSON.parse(sent.body)).toEqual({ paymentKey: vars.paymentKey, orderId: c.order_id, amount: 10_000 });
    expect(sent.headers.get("idempotency-key")).toBe(`confirm-${c.order_id}`);
    expect(await balance(u.id)).toBe("9700000000");
    // The same return again (a reload): the order is paid, Toss is not asked again.
    const confirms = toss.count("POST", /confirm$/);
    await back(c.checkout.success_url, { paymentKey: vars.paymentKey, orderId: c.order_id, amount: "10000" });
    expect(toss.count("POST", /confirm$/)).toBe(confirms);
    // Toss's webhook of it, read back: nothing more.
    toss.answer("GET", new RegExp(`^/v1/payments/${vars.paymentKey}$`), 200, "toss/payment-done.json", () => vars);
    expect((await webhook({ ...vars, status: "DONE" })).status).toBe(200);
    expect(await balance(u.id)).toBe("9700000000");
  });

  test("a declined card and a canceled checkout are recorded, nothing credited", async () => {
    const u = await fastUser(g);
    const c = await order(u.jwt, 20_000);
    toss.answer("POST", /^\/v1\/payments\/confirm$/, 403, "toss/error-reject-card.json", () => ({}));
    const r = await back(c.checkout.success_url, {
      paymentKey: "tgen_declined1",
      orderId: c.order_id,
      amount: "20000",
    });
    expect(r.get("status")).toBe("failed");
    expect(await status(c.order_id)).toMatchObject({ status: "failed", failure_code: "REJECT_CARD_PAYMENT" });
    const c2 = await order(u.jwt, 20_000);
    const r2 = await back(c2.checkout.fail_url, {
      code: "PAY_PROCESS_CANCELED",
      message: "취소",
      orderId: c2.order_id,
    });
    expect(r2.get("status")).toBe("canceled");
    expect(await balance(u.id)).toBe("0");
  });

  test("a duplicate confirm (ALREADY_PROCESSED_PAYMENT) reads the payment back and credits once", async () => {
    const u = await fastUser(g);
    const c = await order(u.jwt, 30_000);
    const vars = { paymentKey: "tgen_dup0001", orderId: c.order_id, amount: 30_000 };
    toss.answer("POST", /^\/v1\/payments\/confirm$/, 400, "toss/error-already-processed.json", () => ({}));
    toss.answer("GET", /^\/v1\/payments\/tgen_dup0001$/, 200, "toss/payment-done.json", () => vars);
    // The webhook came first, then the return's confirm finds it processed.
    expect((await webhook({ ...vars, status: "DONE" })).status).toBe(200);
    const r = await back(c.checkout.success_url, { paymentKey: vars.paymentKey, orderId: c.order_id, amount: "30000" });
    expect(r.get("status")).toBe("paid");
    expect(await balance(u.id)).toBe("29100000000");
  });

  test("a refund (PARTIAL_CANCELED, read back) takes the credit share back once", async () => {
    const u = await fastUser(g);
    const c = await order(u.jwt, 10_000);
    const vars = { paymentKey: "tgen_refund01", orderId: c.order_id, amount: 10_000, balance: 5_000, refund: 5_000 };
    toss.answer("GET", /^\/v1\/payments\/tgen_refund01$/, 200, "toss/payment-partial-canceled.json", () => vars);
    // Reordered: the refund's event is the first we hear of the payment; it is credited, then refunded.
    expect((await webhook({ ...vars, status: "PARTIAL_CANCELED" })).status).toBe(200);
    expect((await webhook({ ...vars, status: "PARTIAL_CANCELED" })).status).toBe(200);
    expect(await status(c.order_id)).toMatchObject({ status: "partially_refunded", refunded_krw: "5000" });
    expect(await balance(u.id)).toBe("4850000000");
  });

  test("an amount mismatch and forged webhooks credit nothing", async () => {
    const u = await fastUser(g);
    const c = await order(u.jwt, 10_000);
    // The redirect claims another amount: refused before any confirm.
    const confirms = toss.count("POST", /confirm$/);
    const r = await back(c.checkout.success_url, { paymentKey: "tgen_x", orderId: c.order_id, amount: "100" });
    expect([r.get("status"), r.get("code")]).toEqual(["error", "payment_unverified"]);
    expect(toss.count("POST", /confirm$/)).toBe(confirms);
    // Toss's read-back says another amount than the order's.
    toss.answer("GET", /^\/v1\/payments\/tgen_cheap$/, 200, "toss/payment-done.json", () => ({
      paymentKey: "tgen_cheap",
      orderId: c.order_id,
      amount: 100,
    }));
    const cheap = await webhook({ paymentKey: "tgen_cheap", orderId: c.order_id, amount: 10_000, status: "DONE" });
    expect([cheap.status, cheap.body.detail.error]).toEqual([400, "payment_unverified"]);
    // Toss knows no such payment.
    toss.answer("GET", /^\/v1\/payments\/tgen_forged$/, 404, "toss/error-not-found.json", () => ({}));
    const forged = await webhook({ paymentKey: "tgen_forged", orderId: c.order_id, amount: 10_000, status: "DONE" });
    expect([forged.status, forged.body.detail.error]).toEqual([400, "payment_unverified"]);
    // The event names this order; the payment read back is another order's.
    toss.answer("GET", /^\/v1\/payments\/tgen_other$/, 200, "toss/payment-done.json", () => ({
      paymentKey: "tgen_other",
      orderId: "ord_someone_else",
      amount: 10_000,
    }));
    const other = await webhook({ paymentKey: "tgen_other", orderId: c.order_id, amount: 10_000, status: "DONE" });
    expect(other.status).toBe(400);
    expect(await status(c.order_id)).toMatchObject({ status: "pending" });
    expect(await balance(u.id)).toBe("0");
  });

  test("the console page may load Toss's widget (and only on this deployment)", async () => {
    const page = await fetch(g.url + "/");
    const csp = page.headers.get("content-security-policy")!;
    expect(csp).toContain("script-src 'self' https://js.tosspayments.com");
    expect(csp).toContain("frame-src https://*.tosspayments.com");
  });
});
