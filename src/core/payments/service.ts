/**
 * Self-service top-ups (docs/payments.md): an order is stored before the customer meets the
 * provider; what the provider verifiably says (a return, a webhook, a refund) is applied to
 * the order by one SQL function each, which credits the net amount at most once per payment
 * and records failures and refunds. Which provider, if any, is the configuration's choice.
 */
import { krwToMicro } from "../../lib/money";
import type { AutoTopupRow, HistoryRow, PaymentRow, PaymentStore } from "./store";
import { topupSplit } from "./fee";
import { PaymentError, type Checkout, type PaymentProvider, type VerifiedPayment } from "./port";

/** Smallest and largest amount one payment may be (KRW). */
export const MIN_TOPUP_KRW = 1_000;
export const MAX_TOPUP_KRW = 10_000_000;

export interface StartedCheckout {
  order: PaymentRow;
  checkout: Checkout;
}

export class PaymentService {
  constructor(
    readonly provider: PaymentProvider | null,
    private readonly repo: PaymentStore,
    /** A stable opaque customer id for the provider (HMAC of the user id). */
    private readonly customerKey: (userId: string) => string,
  ) {}

  async start(user: { id: string; email: string }, amountKrw: number, baseUrl: string): Promise<StartedCheckout> {
    const provider = this.require();
    const { fee, credited } = topupSplit(amountKrw);
    const orderId = `ord_${crypto.randomUUID().replaceAll("-", "")}`;
    const order = await this.repo.create({
      orderId,
      userId: user.id,
      provider: provider.id,
      amountKrw,
      feeKrw: fee,
      creditMicro: krwToMicro(BigInt(credited)),
    });
    try {
      const checkout = await provider.checkout({
        orderId,
        amountKrw,
        orderName: `Credits ₩${amountKrw.toLocaleString("en-US")}`,
        customerKey: this.customerKey(user.id),
        email: user.email,
        returnUrl: `${baseUrl}/billing/return?order_id=${orderId}`,
        webhookUrl: `${baseUrl}/v1/billing/webhooks/${provider.id}`,
      });
      return { order, checkout };
    } catch (e) {
      await this.repo.failed(orderId, "failed", "checkout_unavailable", (e as Error).message.slice(0, 500));
      throw e;
    }
  }

  /** The customer is back from the checkout: finish and apply what the provider says. */
  async returned(orderId: string, query: URLSearchParams): Promise<PaymentRow | null> {
    const provider = this.require();
    const order = await this.repo.byOrder(orderId);
    if (!order || order.provider !== provider.id) return null;
    if (order.status !== "pending" && order.status !== "failed" && order.status !== "canceled") return order;
    const v = await provider.complete(order, query);
    await this.apply(v);
    return this.repo.byOrder(orderId);
  }

  /** A webhook delivery; throws PaymentError("unverified") when it cannot be believed. */
  async webhook(providerId: string, raw: string, headers: Headers): Promise<"applied" | "ignored"> {
    const provider = this.require();
    if (provider.id !== providerId) throw new PaymentError("unverified", `payments here go through ${provider.id}`);
    const v = await provider.webhook(raw, headers);
    if (!v) return "ignored";
    return (await this.apply(v)) ? "applied" : "ignored";
  }

  /** The operator refunds (part of) a paid order at the provider; the refund is then recorded. */
  async refund(orderId: string, amountKrw: number | undefined, reason: string): Promise<PaymentRow | null> {
    const provider = this.require();
    const order = await this.repo.byOrder(orderId);
    if (!order) return null;
    if (order.provider !== provider.id || (order.status !== "paid" && order.status !== "partially_refunded"))
      throw new PaymentError("mismatch", `the order is ${order.status}`);
    const left = order.amountKrw - order.refundedKrw;
    const v = await provider.refund(order, Math.min(amountKrw ?? left, left), reason);
    await this.apply(v);
    return this.repo.byOrder(orderId);
  }

  async order(orderId: string): Promise<PaymentRow | null> {
    return this.repo.byOrder(orderId);
  }

  history(userId: string, limit: number): Promise<HistoryRow[]> {
    return this.repo.history(userId, limit);
  }

  /**
   * Applies a verified state. Paid (and refunded, which implies paid: a refund event may come
   * before the payment's own) goes through gw_payment_paid, which compares the amount with the
   * order's and credits once; failures are recorded on unpaid orders only.
   */
  private async apply(v: VerifiedPayment): Promise<boolean> {
    const order = await this.repo.byOrder(v.orderId);
    if (!order || order.provider !== this.provider!.id) return false;
    if (v.status === "paid" || v.status === "partially_refunded" || v.status === "refunded") {
      if (!v.paymentId) throw new PaymentError("unverified", "a paid payment without its id");
      const state = await this.repo.paid(v.orderId, v.paymentId, v.amountKrw);
      if (state === "amount_mismatch") throw new PaymentError("mismatch", "the provider's amount is not the order's");
      if (state === "payment_reused") throw new PaymentError("mismatch", "that payment already paid another order");
      if (state === "already" && order.providerPaymentId && order.providerPaymentId !== v.paymentId)
        throw new PaymentError("mismatch", "the order was paid by another payment");
      if (v.refundedKrw > 0) await this.repo.refunded(v.orderId, v.refundedKrw);
      return true;
    }
    if (v.status === "failed" || v.status === "canceled")
      return this.repo.failed(v.orderId, v.status, v.failure?.code ?? null, v.failure?.message ?? null);
    return false;
  }

  /** The account's auto top-up settings (defaults: off, no card) and whether the provider can save cards. */
  async autoTopup(userId: string): Promise<{ supported: boolean; row: AutoTopupRow | null }> {
    return { supported: !!this.provider?.savedCards, row: await this.repo.auto(userId) };
  }

  /** Starts saving a card at the provider; it sends the customer back to `/billing/return?card=1`. */
  async registerCard(user: { id: string; email: string }, baseUrl: string): Promise<Checkout> {
    const cards = this.cards();
    const customerKey = this.customerKey(user.id);
    await this.repo.autoEnsure(user.id, this.provider!.id, customerKey);
    return cards.register({ customerKey, email: user.email, returnUrl: `${baseUrl}/billing/return?card=1` });
  }

  /** The return from saving a card: its billing key stored on the account it was saved for. */
  async cardReturned(query: URLSearchParams): Promise<boolean> {
    const cards = this.cards();
    const row = await this.repo.autoByCustomer(query.get("customerKey") ?? "");
    if (!row || row.provider !== this.provider!.id) {
      if (query.get("code")) return false; // a refused card before any row: nothing to record
      throw new PaymentError("unverified", "the card return names no account");
    }
    const saved = await cards.registered(row.customerKey, query);
    await this.repo.autoSetCard(row.userId, saved.billingKey, saved.label);
    return true;
  }

  async removeCard(userId: string): Promise<void> {
    await this.repo.autoSetCard(userId, null, null);
  }

  /** Off by default; on needs a saved card. Amounts as a checkout's; the threshold within them. */
  async configureAuto(userId: string, enabled: boolean, thresholdKrw: number, amountKrw: number): Promise<void> {
    const row = await this.repo.auto(userId);
    if (enabled && !row?.billingKey) throw new PaymentError("mismatch", "save a card before turning auto top-up on");
    if (!row) await this.repo.autoEnsure(userId, this.require().id, this.customerKey(userId));
    await this.repo.autoConfigure(userId, enabled, thresholdKrw, amountKrw);
  }

  /**
   * One pass of the auto top-up job: every claimed account (free credit under its threshold, not
   * tried for `retrySeconds`) is charged its amount on its saved card through an order like a
   * checkout's, applied the same way. A refused charge turns auto top-up off, with the reason.
   */
  async runAutoTopups(retrySeconds: number): Promise<number> {
    if (!this.provider?.savedCards) return 0;
    const due = await this.repo.autoClaimDue(retrySeconds, 50);
    for (const a of due) {
      const { fee, credited } = topupSplit(a.amountKrw);
      const orderId = `ord_${crypto.randomUUID().replaceAll("-", "")}`;
      const order = await this.repo.create({
        orderId,
        userId: a.userId,
        provider: this.provider.id,
        amountKrw: a.amountKrw,
        feeKrw: fee,
        creditMicro: krwToMicro(BigInt(credited)),
      });
      try {
        const v = await this.provider.savedCards.charge(
          { ...order, orderName: `Auto top-up ₩${a.amountKrw.toLocaleString("en-US")}` },
          { billingKey: a.billingKey!, customerKey: a.customerKey },
        );
        await this.apply(v);
        if (v.status === "failed")
          await this.repo.autoFailed(a.userId, `${v.failure?.code ?? "failed"}: ${v.failure?.message ?? ""}`);
      } catch (e) {
        // The provider unreachable: the order is recorded failed; the claim makes the next try wait.
        await this.repo.failed(orderId, "failed", "provider_unavailable", (e as Error).message.slice(0, 500));
      }
    }
    return due.length;
  }

  private cards() {
    const cards = this.require().savedCards;
    if (!cards) throw new PaymentError("mismatch", `${this.provider!.id} here cannot save cards for auto top-up`);
    return cards;
  }

  private require(): PaymentProvider {
    if (!this.provider) throw new PaymentError("provider", "no payment provider is configured");
    return this.provider;
  }
}
