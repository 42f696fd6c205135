/**
 * Toss Payments (docs/payments.md): the payment widget on /billing, then the server's confirm
 * (`POST /v1/payments/confirm`, Basic auth of the secret key) and read-back
 * (`GET /v1/payments/{paymentKey}`). Nothing the browser or a webhook says is believed until
 * Toss's own API says it with our secret key: a webhook's payment is read back, and its order
 * id and amount are compared with ours (by the service, in SQL).
 */
import {
  PaymentError,
  type Checkout,
  type CheckoutOrder,
  type PaymentProvider,
  type SavedCards,
  type StoredOrder,
  type VerifiedPayment,
} from "../../core/payments/port";

export const TOSS_API = "https://api.tosspayments.com";

export interface TossOptions {
  clientKey: string;
  secretKey: string;
  /** API base URL (tests: a local server of recorded answers). */
  apiBase?: string;
  timeoutMs?: number;
}

/** The fields of Toss's Payment object this adapter reads. */
export interface TossPayment {
  paymentKey: string;
  orderId: string;
  status: string;
  totalAmount: number;
  balanceAmount?: number;
  currency?: string;
  cancels?: { cancelAmount: number }[] | null;
  failure?: { code: string; message: string } | null;
}

/** Toss's error body. */
interface TossFailure {
  code: string;
  message: string;
}

export class TossHttp {
  private readonly base: string;
  private readonly auth: string;
  constructor(
    secretKey: string,
    apiBase: string | undefined,
    private readonly timeoutMs = 10_000,
  ) {
    this.base = (apiBase ?? TOSS_API).replace(/\/+$/, "");
    this.auth = `Basic ${Buffer.from(`${secretKey}:`).toString("base64")}`;
  }

  /** One call; a 4xx answers Toss's `{code, message}`, anything else unexpected is a provider error. */
  async call<T>(
    method: string,
    path: string,
    body?: unknown,
    idempotencyKey?: string,
  ): Promise<{ ok: true; value: T } | { ok: false; status: number; failure: TossFailure }> {
    let res: Response;
    try {
      res = await fetch(this.base + path, {
        method,
        headers: {
          authorization: this.auth,
          ...(body !== undefined && { "content-type": "application/json" }),
          ...(idempotencyKey && { "idempotency-key": idempotencyKey }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(this.timeoutMs),
      });
    } catch (e) {
      throw new PaymentError("provider", `Toss Payments unreachable: ${(e as Error).message}`);
    }
    const json = (await res.json().catch(() => null)) as any;
    if (res.ok && json) return { ok: true, value: json as T };
    if (res.status >= 400 && res.status < 500 && typeof json?.code === "string")
      return { ok: false, status: res.status, failure: { code: json.code, message: String(json.message ?? "") } };
    throw new PaymentError("provider", `Toss Payments answered ${res.status}`);
  }

  async payment(paymentKey: string): Promise<TossPayment | null> {
    const r = await this.call<TossPayment>("GET", `/v1/payments/${encodeURIComponent(paymentKey)}`);
    if (r.ok) return r.value;
    if (r.status === 404) return null;
    throw new PaymentError("provider", `Toss Payments read-back refused: ${r.failure.code}`);
  }
}

/** Toss's payment status, as ours. */
export function verifiedFromToss(p: TossPayment): VerifiedPayment {
  if (p.currency && p.currency !== "KRW") throw new PaymentError("mismatch", `payment in ${p.currency}, not KRW`);
  const refunded =
    p.cancels?.reduce((s, c) => s + (c.cancelAmount ?? 0), 0) ??
    (p.balanceAmount !== undefined ? p.totalAmount - p.balanceAmount : 0);
  const status =
    p.status === "DONE"
      ? "paid"
      : p.status === "CANCELED"
        ? "refunded"
        : p.status === "PARTIAL_CANCELED"
          ? "partially_refunded"
          : p.status === "ABORTED"
            ? "failed"
            : p.status === "EXPIRED"
              ? "canceled"
              : "pending";
  return {
    orderId: p.orderId,
    paymentId: p.paymentKey,
    amountKrw: p.totalAmount,
    status,
    refundedKrw: status === "paid" ? 0 : refunded,
    ...(p.failure && { failure: { code: p.failure.code, message: p.failure.message } }),
  };
}

/** Codes in the fail redirect that mean the customer stopped, not that a card was declined. */
const CANCELED_CODES = new Set(["PAY_PROCESS_CANCELED", "USER_CANCEL"]);

/**
 * Everything after the checkout, shared with the simulator's provider (which speaks the same
 * confirm, read-back, cancel and webhook API): only how the checkout starts differs.
 */
export abstract class TossLikeProvider implements PaymentProvider {
  abstract readonly id: "toss" | "sim";
  constructor(protected readonly http: TossHttp) {}

  abstract checkout(order: CheckoutOrder): Promise<Checkout>;

  async complete(order: StoredOrder, q: URLSearchParams): Promise<VerifiedPayment> {
    const code = q.get("code");
    if (code) {
      // The fail redirect: nothing was taken; recorded as what the customer saw.
      const message = (q.get("message") ?? "").slice(0, 500);
      return {
        orderId: order.orderId,
        paymentId: null,
        amountKrw: order.amountKrw,
        status: CANCELED_CODES.has(code) ? "canceled" : "failed",
        refundedKrw: 0,
        failure: { code: code.slice(0, 100), message },
      };
    }
    const paymentKey = q.get("paymentKey") ?? "";
    if (!paymentKey) throw new PaymentError("unverified", "the return names no payment");
    // Toss's own rule: the amount and order of the redirect are checked before confirming.
    if (q.get("orderId") !== order.orderId || Number(q.get("amount")) !== order.amountKrw)
      throw new PaymentError("mismatch", "the return's order or amount is not the order's");
    const r = await this.http.call<TossPayment>(
      "POST",
      "/v1/payments/confirm",
      { paymentKey, orderId: order.orderId, amount: order.amountKrw },
      `confirm-${order.orderId}`,
    );
    if (r.ok) return this.checked(order, r.value);
    if (r.failure.code === "ALREADY_PROCESSED_PAYMENT") {
      // A second confirm (a reload, a double click, the webhook first): what Toss has now.
      const p = await this.http.payment(paymentKey);
      if (!p) throw new PaymentError("unverified", "Toss Payments knows no such payment");
      return this.checked(order, p);
    }
    return {
      orderId: order.orderId,
      paymentId: null,
      amountKrw: order.amountKrw,
      status: "failed",
      refundedKrw: 0,
      failure: { code: r.failure.code, message: r.failure.message.slice(0, 500) },
    };
  }

  async webhook(raw: string): Promise<VerifiedPayment | null> {
    let ev: any;
    try {
      ev = JSON.parse(raw);
    } catch {
      throw new PaymentError("unverified", "the webhook body is not JSON");
    }
    if (ev?.eventType !== "PAYMENT_STATUS_CHANGED") return null;
    const key = ev.data?.paymentKey;
    if (typeof key !== "string" || !key) throw new PaymentError("unverified", "the webhook names no payment");
    const p = await this.http.payment(key);
    if (!p) throw new PaymentError("unverified", "Toss Payments knows no such payment");
    if (ev.data?.orderId !== undefined && ev.data.orderId !== p.orderId)
      throw new PaymentError("unverified", "the webhook's order is not the payment's");
    return verifiedFromToss(p);
  }

  async refund(order: StoredOrder, amountKrw: number, reason: string): Promise<VerifiedPayment> {
    if (!order.providerPaymentId) throw new PaymentError("mismatch", "the order has no payment to refund");
    const r = await this.http.call<TossPayment>(
      "POST",
      `/v1/payments/${encodeURIComponent(order.providerPaymentId)}/cancel`,
      { cancelReason: reason, cancelAmount: amountKrw },
      `refund-${order.orderId}-${amountKrw}-${Date.now()}`,
    );
    if (!r.ok) throw new PaymentError("provider", `refund refused: ${r.failure.code} ${r.failure.message}`);
    return this.checked(order, r.value);
  }

  /** A payment Toss answered for this order: its order id must be ours. */
  protected checked(order: StoredOrder, p: TossPayment): VerifiedPayment {
    if (p.orderId !== order.orderId) throw new PaymentError("mismatch", "Toss's payment is for another order");
    return verifiedFromToss(p);
  }

  /**
   * Toss's automatic payments (자동결제, a separate contract with Toss): the card registration's
   * authKey is exchanged for a billingKey (`POST /v1/billing/authorizations/issue`), which is
   * charged with `POST /v1/billing/{billingKey}`.
   */
  protected billing(register: SavedCards["register"]): SavedCards {
    return {
      register,
      registered: async (customerKey, q) => {
        const code = q.get("code");
        if (code)
          throw new PaymentError("mismatch", `the card was not saved: ${code} ${q.get("message") ?? ""}`.trim());
        const authKey = q.get("authKey");
        if (!authKey || q.get("customerKey") !== customerKey)
          throw new PaymentError("unverified", "the card return names another customer");
        const r = await this.http.call<{ billingKey: string; card?: { number?: string; issuerCode?: string } }>(
          "POST",
          "/v1/billing/authorizations/issue",
          { authKey, customerKey },
        );
        if (!r.ok) throw new PaymentError("mismatch", `the card was not saved: ${r.failure.code} ${r.failure.message}`);
        return { billingKey: r.value.billingKey, label: r.value.card?.number ?? "card" };
      },
      charge: async (order, card) => {
        const r = await this.http.call<TossPayment>(
          "POST",
          `/v1/billing/${encodeURIComponent(card.billingKey)}`,
          {
            customerKey: card.customerKey,
            amount: order.amountKrw,
            orderId: order.orderId,
            orderName: order.orderName,
          },
          `auto-${order.orderId}`,
        );
        if (r.ok) return this.checked(order, r.value);
        return {
          orderId: order.orderId,
          paymentId: null,
          amountKrw: order.amountKrw,
          status: "failed",
          refundedKrw: 0,
          failure: { code: r.failure.code, message: r.failure.message.slice(0, 500) },
        };
      },
    };
  }
}

export class TossProvider extends TossLikeProvider {
  readonly id = "toss" as const;
  readonly pageSources = {
    script: ["https://js.tosspayments.com"],
    frame: ["https://*.tosspayments.com"],
    connect: ["https://*.tosspayments.com"],
  };
  readonly savedCards: SavedCards;
  constructor(private readonly opts: TossOptions) {
    super(new TossHttp(opts.secretKey, opts.apiBase, opts.timeoutMs));
    this.savedCards = this.billing(async (c) => ({
      type: "toss_billing_auth",
      client_key: opts.clientKey,
      customer_key: c.customerKey,
      success_url: c.returnUrl,
      fail_url: c.returnUrl,
    }));
  }

  async checkout(order: CheckoutOrder): Promise<Checkout> {
    const back = (outcome: string) => `${order.returnUrl}${order.returnUrl.includes("?") ? "&" : "?"}toss=${outcome}`;
    return {
      type: "toss_widget",
      client_key: this.opts.clientKey,
      customer_key: order.customerKey,
      order_id: order.orderId,
      order_name: order.orderName,
      amount_krw: order.amountKrw,
      success_url: back("success"),
      fail_url: back("fail"),
    };
  }
}
