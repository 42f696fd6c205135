/**
 * The Stripe adapter through the gateway, with the official `stripe` package against recorded
 * Stripe answers served over HTTP (test/fixtures/payments/stripe): a Checkout Session in KRW
 * (zero-decimal: unit_amount is whole won), signed webhooks (success, replay, a bad signature,
 * an amount mismatch, a failed async payment, an expired session, a refund), the return read
 * back, a canceled checkout. The books are read in SQL.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import Stripe from "stripe";
import { startTestGateway, type TestGateway } from "../harness";
import { fastUser } from "../support/http";
import { RecordedProvider, sample } from "./recorded";

const WHSEC = "whsec_test_0123456789abcdefghijklmnopqrstuv";
const signer = new Stripe("sk_test_signer_only");

describe("Stripe against recorded answers", () => {
  let g: TestGateway;
  let api: RecordedProvider;
  beforeAll(async () => {
    api = new RecordedProvider();
    g = await startTestGateway({
      env: {
        PAYMENTS_PROVIDER: "stripe",
        STRIPE_SECRET_KEY: "sk_test_recorded_0000000000",
        STRIPE_WEBHOOK_SECRET: WHSEC,
        STRIPE_API_BASE: api.url,
        VIDEO_POLL_WORKERS: "0",
      },
    });
  }, 60_000);
  afterAll(async () => {
    await g?.stop();
    await api?.stop();
  });

  const balance = async (userId: string) =>
    (await g.gw.deps.db.query<{ b: string }>("select balance_micro::text as b from users where id = $1", [userId]))[0]!
      .b;
  const row = async (orderId: string) =>
    (
      await g.gw.deps.db.query<{ status: string; failure_code: string | null; provider_payment_id: string | null }>(
        "select status, failure_code, provider_payment_id from payments where order_id = $1",
        [orderId],
      )
    )[0]!;
  let n = 0;
  /** A checkout; the recorded session answers with this order's id. */
  const order = async (jwt: string, amount: number) => {
    const sessionId = `cs_test_a1${++n}`;
    // The order id is ours, made before the call: the answer names the one the SDK sent.
    api.answer("POST", /^\/v1\/checkout\/sessions$/, 200, "stripe/checkout-session-open.json", (req) => ({
      sessionId,
      orderId: new URLSearchParams(req.body).get("client_reference_id"),
      amount,
      successUrl: new URLSearchParams(req.body).get("success_url"),
      cancelUrl: new URLSearchParams(req.body).get("cancel_url"),
    }));
    const r = await g.call("POST", "/v1/billing/checkout", { token: jwt, body: { amount_krw: amount } });
    expect(r.status).toBe(201);
    return { ...r.body, sessionId, intentId: `pi_3QaTest${n}` };
  };
  const deliver = async (type: string, object: string, secret = WHSEC) => {
    const payload = JSON.stringify({
      id: `evt_test_${crypto.randomUUID().slice(0, 8)}`,
      object: "event",
      api_version: "2025-11-17.clover",
      created: Math.floor(Date.now() / 1000),
      type,
      livemode: false,
      pending_webhooks: 1,
      request: { id: null, idempotency_key: null },
      data: { object: JSON.parse(object) },
    });
    const header = await signer.webhooks.generateTestHeaderStringAsync({ payload, secret });
    return g.call("POST", "/v1/billing/webhooks/stripe", {
      raw: payload,
      headers: { "content-type": "application/json", "stripe-signature": header },
    });
  };
  const session = (c: any, vars: Record<string, string | number> = {}) =>
    sample("stripe/checkout-session-paid.json", {
      sessionId: c.sessionId,
      orderId: c.order_id,
      intentId: c.intentId,
      amount: c.paid_krw,
      paymentStatus: "paid",
      sessionStatus: "complete",
      ...vars,
    });

  test("a Checkout Session in KRW, whole won; the signed completion credits ₩9,700 once", async () => {
    const u = await fastUser(g);
    const c = await order(u.jwt, 10_000);
    expect(c.checkout).toEqual({
      type: "redirect",
      url: `https://checkout.stripe.com/c/pay/${c.sessionId}#fidkdWxOYHwnPyd1blpxYHZxWjA0`,
    });
    const sent = api.last("POST", /^\/v1\/checkout\/sessions$/)!;
    const form = new URLSearchParams(sent.body);
    expect(sent.headers.get("authorization")).toBe("Bearer sk_test_recorded_0000000000");
    expect(sent.headers.get("idempotency-key")).toBe(`checkout-${c.order_id}`);
    expect(form.get("mode")).toBe("payment");
    expect(form.get("line_items[0][price_data][currency]")).toBe("krw");
    expect(form.get("line_items[0][price_data][unit_amount]")).toBe("10000");
    expect(form.get("client_reference_id")).toBe(c.order_id);
    expect(form.get("payment_intent_data[metadata][order_id]")).toBe(c.order_id);
    expect(form.get("success_url")).toEndWith(
      `/billing/return?order_id=${c.order_id}&session_id={CHECKOUT_SESSION_ID}`,
    );

    const done = session(c);
    expect((await deliver("checkout.session.completed", done)).status).toBe(200);
    expect((await deliver("checkout.session.completed", done)).status).toBe(200); // Stripe retries: a replay
    expect(await balance(u.id)).toBe("9700000000");
    expect(await row(c.order_id)).toMatchObject({ status: "paid", provider_payment_id: c.intentId });
    // The return, read back with the secret key: already paid, nothing more.
    api.answer(
      "GET",
      new RegExp(`^/v1/checkout/sessions/${c.sessionId}$`),
      200,
      "stripe/checkout-session-paid.json",
      () => ({
        sessionId: c.sessionId,
        orderId: c.order_id,
        intentId: c.intentId,
        amount: 10_000,
        paymentStatus: "paid",
        sessionStatus: "complete",
      }),
    );
    const r = await fetch(`${g.url}/billing/return?order_id=${c.order_id}&session_id=${c.sessionId}`, {
      redirect: "manual",
    });
    expect(r.headers.get("location")).toBe(`/#/billing/result?order_id=${c.order_id}&status=paid`);
    expect(await balance(u.id)).toBe("9700000000");
  });

  test("the return alone (no webhook yet) credits, read back from Stripe", async () => {
    const u = await fastUser(g);
    const c = await order(u.jwt, 20_000);
    api.answer(
      "GET",
      new RegExp(`^/v1/checkout/sessions/${c.sessionId}$`),
      200,
      "stripe/checkout-session-paid.json",
      () => ({
        sessionId: c.sessionId,
        orderId: c.order_id,
        intentId: c.intentId,
        amount: 20_000,
        paymentStatus: "paid",
        sessionStatus: "complete",
      }),
    );
    await fetch(`${g.url}/billing/return?order_id=${c.order_id}&session_id=${c.sessionId}`, { redirect: "manual" });
    expect(await balance(u.id)).toBe("19400000000");
  });

  test("a bad signature, or a signed event with another amount, credits nothing", async () => {
    const u = await fastUser(g);
    const c = await order(u.jwt, 10_000);
    const bad = await deliver("checkout.session.completed", session(c), "whsec_someone_else_entirely_000000");
    expect([bad.status, bad.body.detail.error]).toEqual([400, "payment_unverified"]);
    const unsigned = await g.call("POST", "/v1/billing/webhooks/stripe", {
      raw: JSON.stringify({ type: "checkout.session.completed", data: { object: JSON.parse(session(c)) } }),
      headers: { "content-type": "application/json" },
    });
    expect(unsigned.status).toBe(400);
    const cheap = await deliver("checkout.session.completed", session(c, { amount: 100 }));
    expect([cheap.status, cheap.body.detail.error]).toEqual([400, "payment_unverified"]);
    expect(await row(c.order_id)).toMatchObject({ status: "pending" });
    expect(await balance(u.id)).toBe("0");
  });

  test("a failed async payment, an expired session and a canceled checkout are recorded", async () => {
    const u = await fastUser(g);
    const a = await order(u.jwt, 10_000);
    expect(
      (await deliver("checkout.session.async_payment_failed", session(a, { paymentStatus: "unpaid" }))).status,
    ).toBe(200);
    expect(await row(a.order_id)).toMatchObject({ status: "failed", failure_code: "async_payment_failed" });
    const b = await order(u.jwt, 10_000);
    await deliver(
      "checkout.session.expired",
      session(b, { paymentStatus: "unpaid", sessionStatus: "expired", intentId: "" }),
    );
    expect((await row(b.order_id)).status).toBe("canceled");
    const c = await order(u.jwt, 10_000);
    const r = await fetch(`${g.url}/billing/return?order_id=${c.order_id}&canceled=1`, { redirect: "manual" });
    expect(r.headers.get("location")).toBe(`/#/billing/result?order_id=${c.order_id}&status=canceled`);
    // A session left at the checkout may still be paid later: the webhook then credits.
    await deliver("checkout.session.completed", session(c));
    expect((await row(c.order_id)).status).toBe("paid");
    expect(await balance(u.id)).toBe("9700000000");
  });

  test("a refund (charge.refunded, order read from the PaymentIntent) takes the share back once", async () => {
    const u = await fastUser(g);
    const c = await order(u.jwt, 10_000);
    await deliver("checkout.session.completed", session(c));
    api.answer("GET", new RegExp(`^/v1/payment_intents/${c.intentId}$`), 200, "stripe/payment-intent.json", () => ({
      intentId: c.intentId,
      orderId: c.order_id,
      amount: 10_000,
    }));
    const charge = sample("stripe/charge-refunded.json", { intentId: c.intentId, amount: 10_000, refund: 10_000 });
    expect((await deliver("charge.refunded", charge)).status).toBe(200);
    expect((await deliver("charge.refunded", charge)).status).toBe(200);
    expect((await row(c.order_id)).status).toBe("refunded");
    const entries = await g.gw.deps.db.query<{ kind: string; amount_micro: string }>(
      "select kind, amount_micro::text from ledger_entries where user_id = $1 order by id",
      [u.id],
    );
    expect(entries.map((e) => `${e.kind} ${e.amount_micro}`)).toEqual(["topup 9700000000", "refund -9700000000"]);
  });

  test("Stripe refusing the session is the provider's error (502), the order recorded as failed", async () => {
    const u = await fastUser(g);
    api.answer("POST", /^\/v1\/checkout\/sessions$/, 400, "stripe/error-amount-too-small.json", () => ({}));
    const r = await g.call("POST", "/v1/billing/checkout", { token: u.jwt, body: { amount_krw: 1_000 } });
    expect([r.status, r.body.detail.error]).toEqual([502, "payment_provider_unavailable"]);
    const [p] = await g.gw.deps.db.query<{ status: string }>("select status from payments where user_id = $1", [u.id]);
    expect(p!.status).toBe("failed");
  });
});
