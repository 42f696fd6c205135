/**
 * Toss Payments' payment widget (SDK v2), loaded from Toss only on a deployment that
 * configured Toss (the page's Content-Security-Policy then names js.tosspayments.com). The
 * widget takes the card; Toss sends the customer to the success or fail URL the gateway gave,
 * where the gateway confirms the payment with its secret key.
 */
const SDK = "https://js.tosspayments.com/v2/standard";

declare global {
  interface Window {
    TossPayments?: (clientKey: string) => any;
  }
}

let loading: Promise<void> | null = null;

export function loadTossSdk(): Promise<void> {
  loading ??= new Promise((resolve, reject) => {
    const s = document.createElement("script");
    s.src = SDK;
    s.onload = () => resolve();
    s.onerror = () => ((loading = null), reject(new Error("Toss Payments could not be loaded")));
    document.head.append(s);
  });
  return loading;
}

export interface TossCheckout {
  client_key: string;
  customer_key: string;
  order_id: string;
  order_name: string;
  amount_krw: number;
  success_url: string;
  fail_url: string;
}

/** Draws the widget into the two elements; resolves to the function that starts the payment. */
export async function renderTossWidget(
  c: TossCheckout,
  methods: string,
  agreement: string,
): Promise<() => Promise<void>> {
  await loadTossSdk();
  const widgets = window.TossPayments!(c.client_key).widgets({ customerKey: c.customer_key });
  await widgets.setAmount({ currency: "KRW", value: c.amount_krw });
  await Promise.all([
    widgets.renderPaymentMethods({ selector: methods, variantKey: "DEFAULT" }),
    widgets.renderAgreement({ selector: agreement, variantKey: "AGREEMENT" }),
  ]);
  return () =>
    widgets.requestPayment({
      orderId: c.order_id,
      orderName: c.order_name,
      successUrl: c.success_url,
      failUrl: c.fail_url,
    });
}
