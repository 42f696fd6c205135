/**
 * A payment provider for demo mode and tests, under `/sim/payments`: it speaks Toss Payments'
 * server API (`POST /v1/payments/confirm`, `GET /v1/payments/{paymentKey}`,
 * `POST /v1/payments/{paymentKey}/cancel`, `{code, message}` errors, Basic auth, and
 * `PAYMENT_STATUS_CHANGED` webhooks), and in place of Toss's widget serves a checkout page of
 * its own (`POST /v1/checkouts` makes one; this endpoint is the simulator's, not Toss's).
 *
 * Test cards on the checkout page: any number pays, except one ending in 0002 (declined,
 * `REJECT_CARD_PAYMENT`). Every webhook sent is kept, so a test can replay it
 * (`GET /sim/payments/v1/_webhooks`).
 */
import { jsonResponse, readJsonBody } from "../http.ts";
import type { SimContext, SimRouteTable } from "../routes.ts";

interface SimOrder {
  orderId: string;
  orderName: string;
  amount: number;
  successUrl: string;
  failUrl: string;
  webhookUrl: string | null;
}

interface SimPayment {
  paymentKey: string;
  orderId: string;
  orderName: string;
  status: "IN_PROGRESS" | "DONE" | "CANCELED" | "PARTIAL_CANCELED";
  method: string;
  currency: "KRW";
  totalAmount: number;
  balanceAmount: number;
  requestedAt: string;
  approvedAt: string | null;
  cancels: { cancelAmount: number; cancelReason: string; canceledAt: string }[] | null;
}

interface Book {
  orders: Map<string, SimOrder>;
  payments: Map<string, SimPayment>;
  webhooks: { url: string; body: string }[];
  /** Card registrations in progress, by id; then authKeys, then billing keys with their card number. */
  registrations: Map<string, { customerKey: string; successUrl: string; failUrl: string }>;
  authKeys: Map<string, { customerKey: string; card: string }>;
  billingKeys: Map<string, { customerKey: string; card: string }>;
}

const book = (ctx: SimContext) =>
  ctx.sim.scratch<Book>("payments", () => ({
    orders: new Map(),
    payments: new Map(),
    webhooks: [],
    registrations: new Map(),
    authKeys: new Map(),
    billingKeys: new Map(),
  }));

const token = (ctx: SimContext, prefix: string) =>
  `${prefix}${ctx.sim.nextId()}${crypto.randomUUID().replaceAll("-", "").slice(0, 16)}`;

const fail = (status: number, code: string, message: string) => jsonResponse({ code, message }, status);

const withQuery = (url: string, q: Record<string, string>) =>
  `${url}${url.includes("?") ? "&" : "?"}${new URLSearchParams(q)}`;

const redirect = (location: string) => new Response(null, { status: 303, headers: { location } });

/** Toss's webhook for a payment's new status; sent after the answer, failures ignored (as a provider's first try). */
function notify(ctx: SimContext, p: SimPayment): void {
  const order = book(ctx).orders.get(p.orderId);
  if (!order?.webhookUrl) return;
  const body = JSON.stringify({
    eventType: "PAYMENT_STATUS_CHANGED",
    createdAt: new Date().toISOString(),
    data: { paymentKey: p.paymentKey, orderId: p.orderId, status: p.status },
  });
  book(ctx).webhooks.push({ url: order.webhookUrl, body });
  const url = order.webhookUrl;
  setTimeout(() => {
    fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body }).catch(() => {});
  }, 0);
}

const esc = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

function checkoutPage(o: SimOrder): Response {
  const won = `₩${o.amount.toLocaleString("en-US")}`;
  const id = encodeURIComponent(o.orderId);
  const html = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Simulated checkout</title>
<meta name="viewport" content="width=device-width, initial-scale=1"><link rel="icon" href="data:,"></head>
<body style="font-family:sans-serif;max-width:28rem;margin:2rem auto">
<h1>Simulated checkout</h1>
<p>No real money moves: this is the gateway's built-in payment simulator.</p>
<p><strong>${esc(o.orderName)}</strong> — <span id="amount">${won}</span></p>
<form method="post" action="/sim/payments/checkout/${id}/pay">
<label>Card number <input name="card" value="4242 4242 4242 4242" inputmode="numeric"></label>
<p><small>A card ending in 0002 is declined.</small></p>
<button type="submit">Pay ${won}</button>
</form>
<form method="post" action="/sim/payments/checkout/${id}/cancel"><button type="submit">Cancel</button></form>
</body></html>`;
  return new Response(html, { headers: { "content-type": "text/html; charset=utf-8" } });
}

export const paymentRoutes: SimRouteTable = {
  protocol: "toss-payments",
  // The server API needs Toss's Basic auth (any secret); the checkout pages are the customer's.
  authenticate(req, url) {
    if (url.pathname.startsWith("/sim/payments/checkout/") || url.pathname.startsWith("/sim/payments/card/"))
      return undefined;
    const auth = req.headers.get("authorization") ?? "";
    if (!/^Basic [A-Za-z0-9+/=]{4,}$/.test(auth))
      return fail(401, "UNAUTHORIZED_KEY", "인증되지 않은 시크릿 키 혹은 클라이언트 키 입니다.");
    return undefined;
  },
  error: (status, message) => fail(status, status === 404 ? "NOT_FOUND" : "INVALID_REQUEST", message ?? "error"),
  routes: {
    "POST /v1/checkouts": async (ctx) => {
      const { body } = await readJsonBody<Partial<SimOrder>>(ctx);
      const amount = Number(body.amount);
      if (typeof body.orderId !== "string" || !/^[A-Za-z0-9_-]{6,64}$/.test(body.orderId))
        return fail(400, "INVALID_ORDER_ID", "orderId must be 6-64 characters of A-Z, a-z, 0-9, - and _.");
      if (!Number.isInteger(amount) || amount < 1)
        return fail(400, "INVALID_AMOUNT", "amount must be a positive integer.");
      if (typeof body.successUrl !== "string" || typeof body.failUrl !== "string")
        return fail(400, "INVALID_REQUEST", "successUrl and failUrl are required.");
      const b = book(ctx);
      const seen = b.orders.get(body.orderId);
      if (seen && seen.amount !== amount)
        return fail(400, "DUPLICATED_ORDER_ID", "This orderId was used with another amount.");
      b.orders.set(body.orderId, {
        orderId: body.orderId,
        orderName: String(body.orderName ?? "Order"),
        amount,
        successUrl: body.successUrl,
        failUrl: body.failUrl,
        webhookUrl: typeof body.webhookUrl === "string" ? body.webhookUrl : null,
      });
      return jsonResponse({
        checkoutUrl: `${ctx.url.origin}/sim/payments/checkout/${encodeURIComponent(body.orderId)}`,
      });
    },
    "GET /checkout/{orderId}": (ctx) => {
      const o = book(ctx).orders.get(ctx.params.orderId!);
      return o ? checkoutPage(o) : fail(404, "NOT_FOUND_ORDER", "No such checkout.");
    },
    "POST /checkout/{orderId}/pay": async (ctx) => {
      const b = book(ctx);
      const o = b.orders.get(ctx.params.orderId!);
      if (!o) return fail(404, "NOT_FOUND_ORDER", "No such checkout.");
      const card = String((await ctx.req.formData().catch(() => null))?.get("card") ?? "").replace(/\D/g, "");
      if (card.endsWith("0002"))
        return redirect(
          withQuery(o.failUrl, {
            code: "REJECT_CARD_PAYMENT",
            message: "한도초과 혹은 잔액부족으로 결제에 실패했습니다.",
            orderId: o.orderId,
          }),
        );
      const paymentKey = `simpk_${ctx.sim.nextId()}${crypto.randomUUID().replaceAll("-", "").slice(0, 16)}`;
      b.payments.set(paymentKey, {
        paymentKey,
        orderId: o.orderId,
        orderName: o.orderName,
        status: "IN_PROGRESS",
        method: "카드",
        currency: "KRW",
        totalAmount: o.amount,
        balanceAmount: o.amount,
        requestedAt: new Date().toISOString(),
        approvedAt: null,
        cancels: null,
      });
      return redirect(withQuery(o.successUrl, { paymentKey, orderId: o.orderId, amount: String(o.amount) }));
    },
    "POST /checkout/{orderId}/cancel": (ctx) => {
      const o = book(ctx).orders.get(ctx.params.orderId!);
      if (!o) return fail(404, "NOT_FOUND_ORDER", "No such checkout.");
      return redirect(
        withQuery(o.failUrl, {
          code: "PAY_PROCESS_CANCELED",
          message: "사용자에 의해 결제가 취소되었습니다.",
          orderId: o.orderId,
        }),
      );
    },
    "POST /v1/payments/confirm": async (ctx) => {
      const { body } = await readJsonBody<{ paymentKey?: string; orderId?: string; amount?: number }>(ctx);
      const p = book(ctx).payments.get(String(body.paymentKey));
      if (!p) return fail(404, "NOT_FOUND_PAYMENT", "존재하지 않는 결제 정보 입니다.");
      if (p.orderId !== body.orderId || p.totalAmount !== body.amount)
        return fail(400, "INVALID_REQUEST", "결제 금액 또는 주문번호가 일치하지 않습니다.");
      if (p.status !== "IN_PROGRESS") return fail(400, "ALREADY_PROCESSED_PAYMENT", "이미 처리된 결제 입니다.");
      p.status = "DONE";
      p.approvedAt = new Date().toISOString();
      notify(ctx, p);
      return jsonResponse(p);
    },
    "GET /v1/payments/{paymentKey}": (ctx) => {
      const p = book(ctx).payments.get(ctx.params.paymentKey!);
      return p ? jsonResponse(p) : fail(404, "NOT_FOUND_PAYMENT", "존재하지 않는 결제 정보 입니다.");
    },
    "POST /v1/payments/{paymentKey}/cancel": async (ctx) => {
      const { body } = await readJsonBody<{ cancelReason?: string; cancelAmount?: number }>(ctx);
      const p = book(ctx).payments.get(ctx.params.paymentKey!);
      if (!p) return fail(404, "NOT_FOUND_PAYMENT", "존재하지 않는 결제 정보 입니다.");
      if (p.status !== "DONE" && p.status !== "PARTIAL_CANCELED")
        return fail(400, "NOT_CANCELABLE_PAYMENT", "취소 할 수 없는 결제 입니다.");
      const amount = body.cancelAmount ?? p.balanceAmount;
      if (!Number.isInteger(amount) || amount < 1 || amount > p.balanceAmount)
        return fail(400, "NOT_CANCELABLE_AMOUNT", "취소 할 수 없는 금액 입니다.");
      p.balanceAmount -= amount;
      p.cancels = [
        ...(p.cancels ?? []),
        { cancelAmount: amount, cancelReason: String(body.cancelReason ?? ""), canceledAt: new Date().toISOString() },
      ];
      p.status = p.balanceAmount === 0 ? "CANCELED" : "PARTIAL_CANCELED";
      notify(ctx, p);
      return jsonResponse(p);
    },
    "GET /v1/_webhooks": (ctx) => jsonResponse(book(ctx).webhooks),
    // Saving a card for automatic payments: the simulator's page in place of Toss's window.
    "POST /v1/billing/registrations": async (ctx) => {
      const { body } = await readJsonBody<{ customerKey?: string; successUrl?: string; failUrl?: string }>(ctx);
      if (
        typeof body.customerKey !== "string" ||
        typeof body.successUrl !== "string" ||
        typeof body.failUrl !== "string"
      )
        return fail(400, "INVALID_REQUEST", "customerKey, successUrl and failUrl are required.");
      const id = token(ctx, "reg_");
      book(ctx).registrations.set(id, {
        customerKey: body.customerKey,
        successUrl: body.successUrl,
        failUrl: body.failUrl,
      });
      return jsonResponse({ checkoutUrl: `${ctx.url.origin}/sim/payments/card/${id}` });
    },
    "GET /card/{id}": (ctx) => {
      if (!book(ctx).registrations.has(ctx.params.id!)) return fail(404, "NOT_FOUND", "No such registration.");
      const html = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Simulated card registration</title>
<meta name="viewport" content="width=device-width, initial-scale=1"><link rel="icon" href="data:,"></head>
<body style="font-family:sans-serif;max-width:28rem;margin:2rem auto">
<h1>Simulated card registration</h1>
<p>No real card is saved: this is the gateway's built-in payment simulator.</p>
<form method="post" action="/sim/payments/card/${encodeURIComponent(ctx.params.id!)}/save">
<label>Card number <input name="card" value="4242 4242 4242 4242" inputmode="numeric"></label>
<p><small>A card ending in 0002 is refused; one ending in 0051 is saved but declines every charge.</small></p>
<button type="submit">Save card</button>
</form></body></html>`;
      return new Response(html, { headers: { "content-type": "text/html; charset=utf-8" } });
    },
    "POST /card/{id}/save": async (ctx) => {
      const b = book(ctx);
      const reg = b.registrations.get(ctx.params.id!);
      if (!reg) return fail(404, "NOT_FOUND", "No such registration.");
      b.registrations.delete(ctx.params.id!);
      const card = String((await ctx.req.formData().catch(() => null))?.get("card") ?? "").replace(/\D/g, "");
      if (card.endsWith("0002"))
        return redirect(
          withQuery(reg.failUrl, { code: "REJECT_CARD_COMPANY", message: "카드 정보를 다시 확인해주세요." }),
        );
      const authKey = token(ctx, "bln_");
      b.authKeys.set(authKey, { customerKey: reg.customerKey, card });
      return redirect(withQuery(reg.successUrl, { authKey, customerKey: reg.customerKey }));
    },
    "POST /v1/billing/authorizations/issue": async (ctx) => {
      const { body } = await readJsonBody<{ authKey?: string; customerKey?: string }>(ctx);
      const b = book(ctx);
      const auth = b.authKeys.get(String(body.authKey));
      if (!auth || auth.customerKey !== body.customerKey)
        return fail(404, "NOT_FOUND_BILLING_AUTH", "존재하지 않는 인증 정보입니다.");
      b.authKeys.delete(String(body.authKey));
      const billingKey = token(ctx, "bk_");
      b.billingKeys.set(billingKey, auth);
      return jsonResponse({
        mId: "tvivarepublica",
        customerKey: auth.customerKey,
        authenticatedAt: new Date().toISOString(),
        method: "카드",
        billingKey,
        card: {
          issuerCode: "71",
          acquirerCode: "71",
          number: `${auth.card.slice(0, 4)}********${auth.card.slice(-4)}`,
          cardType: "신용",
          ownerType: "개인",
        },
      });
    },
    "POST /v1/billing/{billingKey}": async (ctx) => {
      const { body } = await readJsonBody<{
        customerKey?: string;
        amount?: number;
        orderId?: string;
        orderName?: string;
      }>(ctx);
      const b = book(ctx);
      const saved = b.billingKeys.get(ctx.params.billingKey!);
      if (!saved || saved.customerKey !== body.customerKey)
        return fail(404, "NOT_FOUND_BILLING_KEY", "존재하지 않는 빌링키입니다.");
      if (!Number.isInteger(body.amount) || (body.amount as number) < 1 || typeof body.orderId !== "string")
        return fail(400, "INVALID_REQUEST", "amount and orderId are required.");
      if (saved.card.endsWith("0051"))
        return fail(403, "REJECT_CARD_PAYMENT", "한도초과 혹은 잔액부족으로 결제에 실패했습니다.");
      const now = new Date().toISOString();
      const p: SimPayment = {
        paymentKey: token(ctx, "simpk_"),
        orderId: body.orderId,
        orderName: String(body.orderName ?? "Order"),
        status: "DONE",
        method: "카드",
        currency: "KRW",
        totalAmount: body.amount as number,
        balanceAmount: body.amount as number,
        requestedAt: now,
        approvedAt: now,
        cancels: null,
      };
      b.payments.set(p.paymentKey, p);
      return jsonResponse(p);
    },
  },
};
