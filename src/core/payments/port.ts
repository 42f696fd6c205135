/**
 * The payments port: what the billing service needs from a payment provider (Toss Payments,
 * Stripe, or the simulator's provider in demo mode and tests). An adapter speaks its provider's
 * API and says what the provider *verifiably* says about a payment; the service alone decides
 * what that does to the books (src/core/payments/service.ts). docs/payments.md.
 */

export type PaymentProviderId = "toss" | "stripe" | "sim";

/** An order as the provider needs it to start a checkout. */
export interface CheckoutOrder {
  orderId: string;
  amountKrw: number;
  /** Shown at the checkout ("Credits ₩10,000"). */
  orderName: string;
  /** A stable, opaque id of the account at the provider (never the email or the user id itself). */
  customerKey: string;
  email: string;
  /** Where the provider sends the customer back: ours, `/billing/return?…`. */
  returnUrl: string;
  /** Where the provider may deliver webhooks (used by providers that take it per checkout). */
  webhookUrl: string;
}

/** How the console takes the customer to the provider. */
export type Checkout =
  | { type: "redirect"; url: string }
  | {
      /** Toss's payment widget, drawn on /billing with the client key. */
      type: "toss_widget";
      client_key: string;
      customer_key: string;
      order_id: string;
      order_name: string;
      amount_krw: number;
      success_url: string;
      fail_url: string;
    }
  | {
      /** Toss's card registration for automatic payments (SDK v2 `requestBillingAuth`). */
      type: "toss_billing_auth";
      client_key: string;
      customer_key: string;
      success_url: string;
      fail_url: string;
    };

export type VerifiedStatus = "pending" | "paid" | "failed" | "canceled" | "partially_refunded" | "refunded";

/** What the provider says about one payment, read from its API or a signed event. */
export interface VerifiedPayment {
  /** Our order id as the provider has it. */
  orderId: string;
  /** The provider's payment id (Toss paymentKey, Stripe PaymentIntent); null before there is one. */
  paymentId: string | null;
  /** The amount the provider took or will take (KRW). */
  amountKrw: number;
  status: VerifiedStatus;
  /** Total refunded so far (KRW). */
  refundedKrw: number;
  failure?: { code: string; message: string };
}

/** The order as stored, for finishing it. */
export interface StoredOrder {
  orderId: string;
  amountKrw: number;
  providerPaymentId: string | null;
}

export interface PaymentProvider {
  readonly id: PaymentProviderId;
  /** Content-Security-Policy sources the console page needs for this provider's checkout (Toss's widget). */
  readonly pageSources?: { script: string[]; frame: string[]; connect: string[] };
  checkout(order: CheckoutOrder): Promise<Checkout>;
  /**
   * The customer came back from the checkout with the provider's query parameters: finish the
   * payment where the provider needs it (Toss's confirm) and say what the provider now says.
   */
  complete(order: StoredOrder, query: URLSearchParams): Promise<VerifiedPayment>;
  /**
   * A webhook delivery, verified (Stripe's signature; Toss and the simulator: the payment read
   * back from the provider's API). Null for an event that concerns no payment state.
   * Throws PaymentError("unverified") when it cannot be believed.
   */
  webhook(raw: string, headers: Headers): Promise<VerifiedPayment | null>;
  /** Refunds `amountKrw` of a paid payment at the provider and says what it now says. */
  refund(order: StoredOrder, amountKrw: number, reason: string): Promise<VerifiedPayment>;
  /** Saved cards for auto top-up, where the provider supports them (absent: no auto top-up). */
  readonly savedCards?: SavedCards;
}

/** A card saved at the provider and charged later without the customer (auto top-up). */
export interface SavedCards {
  /** Starts saving a card; the provider sends the customer back to `returnUrl`. */
  register(c: { customerKey: string; email: string; returnUrl: string }): Promise<Checkout>;
  /** The customer is back: the provider's token for the card, and a label to show. */
  registered(customerKey: string, query: URLSearchParams): Promise<{ billingKey: string; label: string }>;
  /** Charges the saved card for an order; what the provider says of that payment. */
  charge(
    order: StoredOrder & { orderName: string },
    card: { billingKey: string; customerKey: string },
  ): Promise<VerifiedPayment>;
}

/**
 * `unverified`: a webhook or return that cannot be believed (bad signature, a read-back that
 * disagrees); `mismatch`: the provider's order or amount is not ours; `provider`: the provider
 * could not be reached or answered unexpectedly.
 */
export class PaymentError extends Error {
  constructor(
    readonly kind: "unverified" | "mismatch" | "provider",
    message: string,
  ) {
    super(message);
  }
}
