/**
 * Stripe (docs/payments.md): a Checkout Session in KRW (a zero-decimal currency: `unit_amount`
 * is whole won) through the official `stripe` package; webhooks are believed only when
 * `stripe.webhooks.constructEventAsync` verifies their signature with STRIPE_WEBHOOK_SECRET.
 * The return from the checkout is believed only as the session read back with the secret key.
 */
import Stripe from "stripe";
import {
  PaymentError,
  type Checkout,
  type CheckoutOrder,
  type PaymentProvider,
  type StoredOrder,
  type VerifiedPayment,
} from "../../core/payments/port";

export interface StripeOptions {
  secretKey: string;
  webhookSecret: string;
  /** API base URL (tests: a local server of recorded answers). */
  apiBase?: string;
  timeoutMs?: number;
}

const idOf = (x: string | { id: string } | null | undefined) => (typeof x === "string" ? x : (x?.id ?? null));

export class StripeProvider implements PaymentProvider {
  readonly id = "stripe" as const;
  private readonly stripe: Stripe;
  constructor(private readonly opts: StripeOptions) {
    const base = opts.apiBase ? new URL(opts.apiBase) : null;
    this.stripe = new Stripe(opts.secretKey, {
      maxNetworkRetries: 1,
      timeout: opts.timeoutMs ?? 10_000,
      ...(base && {
        host: base.hostname,
        port: base.port || (base.protocol === "https:" ? 443 : 80),
        protocol: base.protocol === "https:" ? "https" : "http",
      }),
    });
  }

  async checkout(order: CheckoutOrder): Promise<Checkout> {
    const join = order.returnUrl.includes("?") ? "&" : "?";
    const session = await this.guard(() =>
      this.stripe.checkout.sessions.create(
        {
          mode: "payment",
          line_items: [
            {
              quantity: 1,
              price_data: { currency: "krw", unit_amount: order.amountKrw, product_data: { name: order.orderName } },
            },
          ],
          client_reference_id: order.orderId,
          metadata: { order_id: order.orderId },
          payment_intent_data: { metadata: { order_id: order.orderId } },
          customer_email: order.email,
          success_url: `${order.returnUrl}${join}session_id={CHECKOUT_SESSION_ID}`,
          cancel_url: `${order.returnUrl}${join}canceled=1`,
        },
        { idempotencyKey: `checkout-${order.orderId}` },
      ),
    );
    if (!session.url) throw new PaymentError("provider", "Stripe answered a session without a URL");
    return { type: "redirect", url: session.url };
  }

  async complete(order: StoredOrder, q: URLSearchParams): Promise<VerifiedPayment> {
    if (q.get("canceled")) {
      // The customer left the checkout; its session may still be paid (the webhook then credits).
      return {
        orderId: order.orderId,
        paymentId: null,
        amountKrw: order.amountKrw,
        status: "canceled",
        refundedKrw: 0,
        failure: { code: "checkout_canceled", message: "The checkout was left without paying." },
      };
    }
    const id = q.get("session_id");
    if (!id) throw new PaymentError("unverified", "the return names no session");
    const s = await this.guard(() => this.stripe.checkout.sessions.retrieve(id));
    if (s.client_reference_id !== order.orderId) throw new PaymentError("mismatch", "the session is for another order");
    return this.fromSession(s);
  }

  async webhook(raw: string, headers: Headers): Promise<VerifiedPayment | null> {
    let ev: Stripe.Event;
    try {
      ev = await this.stripe.webhooks.constructEventAsync(
        raw,
        headers.get("stripe-signature") ?? "",
        this.opts.webhookSecret,
      );
    } catch (e) {
      throw new PaymentError("unverified", `Stripe signature: ${(e as Error).message.slice(0, 120)}`);
    }
    switch (ev.type) {
      case "checkout.session.completed":
      case "checkout.session.async_payment_succeeded":
      case "checkout.session.async_payment_failed":
      case "checkout.session.expired":
        return this.fromSession(ev.data.object, ev.type === "checkout.session.async_payment_failed");
      case "charge.refunded": {
        const charge = ev.data.object;
        const pi = idOf(charge.payment_intent);
        if (!pi) return null;
        // The order is on the PaymentIntent's metadata (a charge does not carry it).
        const intent = await this.guard(() => this.stripe.paymentIntents.retrieve(pi));
        const orderId = intent.metadata?.order_id;
        if (!orderId) return null;
        this.krw(charge.currency);
        return {
          orderId,
          paymentId: pi,
          amountKrw: charge.amount,
          status: charge.amount_refunded >= charge.amount ? "refunded" : "partially_refunded",
          refundedKrw: charge.amount_refunded,
        };
      }
      default:
        return null;
    }
  }

  async refund(order: StoredOrder, amountKrw: number, reason: string): Promise<VerifiedPayment> {
    if (!order.providerPaymentId) throw new PaymentError("mismatch", "the order has no payment to refund");
    const pi = order.providerPaymentId;
    await this.guard(() =>
      this.stripe.refunds.create({
        payment_intent: pi,
        amount: amountKrw,
        metadata: { order_id: order.orderId, reason },
      }),
    );
    const intent = await this.guard(() => this.stripe.paymentIntents.retrieve(pi, { expand: ["latest_charge"] }));
    const charge = intent.latest_charge as Stripe.Charge | null;
    const refunded = charge?.amount_refunded ?? amountKrw;
    return {
      orderId: order.orderId,
      paymentId: pi,
      amountKrw: intent.amount,
      status: refunded >= intent.amount ? "refunded" : "partially_refunded",
      refundedKrw: refunded,
    };
  }

  private fromSession(s: Stripe.Checkout.Session, failed = false): VerifiedPayment {
    const orderId = s.client_reference_id ?? s.metadata?.order_id;
    if (!orderId) throw new PaymentError("unverified", "the session names no order");
    this.krw(s.currency);
    const paid = s.payment_status === "paid";
    return {
      orderId,
      paymentId: idOf(s.payment_intent),
      amountKrw: s.amount_total ?? 0,
      status: failed ? "failed" : paid ? "paid" : s.status === "expired" ? "canceled" : "pending",
      refundedKrw: 0,
      ...(failed && { failure: { code: "async_payment_failed", message: "The payment did not go through." } }),
    };
  }

  private krw(currency: string | null | undefined): void {
    if ((currency ?? "").toLowerCase() !== "krw") throw new PaymentError("mismatch", `payment in ${currency}, not KRW`);
  }

  /** Stripe's errors: a card or request refusal is the provider's word, not ours to retry. */
  private async guard<T>(f: () => Promise<T>): Promise<T> {
    try {
      return await f();
    } catch (e) {
      if (e instanceof PaymentError) throw e;
      throw new PaymentError("provider", `Stripe: ${(e as Error).message.slice(0, 200)}`);
    }
  }
}
