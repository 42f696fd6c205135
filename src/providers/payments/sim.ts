/**
 * The simulator's payment provider (demo mode, SIMULATOR=on, tests): the built-in simulator
 * (src/sim/protocols/payments.ts) speaks Toss's confirm, read-back, cancel and webhook API, so
 * this is the Toss adapter with one difference: instead of Toss's widget, the checkout is a
 * page of the simulator the customer is sent to. Credits bought here move the real ledger.
 */
import type { Checkout, CheckoutOrder, SavedCards } from "../../core/payments/port";
import { PaymentError } from "../../core/payments/port";
import { TossHttp, TossLikeProvider } from "./toss";

export class SimPaymentProvider extends TossLikeProvider {
  readonly id = "sim" as const;
  readonly savedCards: SavedCards;
  constructor(private readonly baseUrl: string) {
    super(new TossHttp("sim_sk_demo", baseUrl));
    // Saving a card: the simulator's own page in place of Toss's registration window.
    this.savedCards = this.billing(async (c) => {
      const r = await this.http.call<{ checkoutUrl: string }>("POST", "/v1/billing/registrations", {
        customerKey: c.customerKey,
        successUrl: c.returnUrl,
        failUrl: c.returnUrl,
      });
      if (!r.ok) throw new PaymentError("provider", `the simulator refused the card registration: ${r.failure.code}`);
      return { type: "redirect", url: r.value.checkoutUrl };
    });
  }

  async checkout(order: CheckoutOrder): Promise<Checkout> {
    const r = await this.http.call<{ checkoutUrl: string }>("POST", "/v1/checkouts", {
      orderId: order.orderId,
      orderName: order.orderName,
      amount: order.amountKrw,
      successUrl: `${order.returnUrl}${order.returnUrl.includes("?") ? "&" : "?"}toss=success`,
      failUrl: `${order.returnUrl}${order.returnUrl.includes("?") ? "&" : "?"}toss=fail`,
      webhookUrl: order.webhookUrl,
    });
    if (!r.ok) throw new PaymentError("provider", `the simulator refused the checkout: ${r.failure.code}`);
    return { type: "redirect", url: r.value.checkoutUrl };
  }
}
