/**
 * Self-service credits (docs/payments.md): what the account may buy and at what fee, a
 * checkout at the configured payment provider, the return from it (`/billing/return`, which
 * finishes the payment server-side and sends the customer to the console's result page), the
 * providers' webhooks, the account's billing history (JSON or CSV) and the operator's refunds.
 */
import { Elysia, t } from "elysia";
import { Type } from "@sinclair/typebox";
import { GatewayError, text } from "../../core/errors";
import { PLATFORM_FEE_PERCENT, topupSplit } from "../../core/payments/fee";
import { PaymentError } from "../../core/payments/port";
import { MAX_TOPUP_KRW, MIN_TOPUP_KRW, type PaymentService } from "../../core/payments/service";
import type { HistoryRow, PaymentRow } from "../../db/repos/payments";
import { MICRO_PER_KRW, microToKrw } from "../../lib/money";
import { log } from "../../lib/log";
import type { AppDeps } from "../deps";
import { notFound } from "../params";
import { AUTH } from "../security";
import { answerAs, created, errors, ok } from "../openapi/describe";
import { BillingHistory, BillingInfo, CheckoutStarted, Payment, WebhookReceived } from "../openapi/billing-shapes";

/** Exact KRW of micro-won, as a decimal string without trailing zeros ("9700", "-0.5"). */
export function exactKrw(micro: bigint): string {
  const neg = micro < 0n;
  const a = neg ? -micro : micro;
  const frac = (a % MICRO_PER_KRW).toString().padStart(6, "0").replace(/0+$/, "");
  return `${neg ? "-" : ""}${a / MICRO_PER_KRW}${frac ? `.${frac}` : ""}`;
}

export function toPayment(p: PaymentRow) {
  return {
    order_id: p.orderId,
    provider: p.provider,
    status: p.status,
    paid_krw: p.amountKrw,
    fee_krw: p.feeKrw,
    credited_krw: p.amountKrw - p.feeKrw,
    refunded_krw: p.refundedKrw,
    failure_code: p.failureCode,
    failure_message: p.failureMessage,
    created_at: p.createdAt,
    paid_at: p.paidAt,
  };
}

const toHistory = (h: HistoryRow) => ({
  at: h.at,
  type: h.type,
  order_id: h.orderId,
  provider: h.provider,
  paid_krw: h.paidKrw,
  fee_krw: h.feeKrw,
  amount_krw: h.amountMicro === null ? null : exactKrw(h.amountMicro),
  balance_krw: h.balanceMicro === null ? null : exactKrw(h.balanceMicro),
  failure_code: h.failureCode,
});

export const HISTORY_CSV_COLUMNS = [
  "at",
  "type",
  "order_id",
  "provider",
  "paid_krw",
  "fee_krw",
  "amount_krw",
  "balance_krw",
  "failure_code",
] as const;

function csvCell(v: unknown): string {
  if (v === null || v === undefined) return "";
  let s = String(v);
  // Only our own values land here, but a spreadsheet must never run a cell as a formula.
  if (typeof v === "string" && /^[=+@\t\r]/.test(s)) s = `'${s}`;
  return /[",\n\r]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

/** The errors a payment step can end in, as the API's. */
export function paymentGatewayError(e: unknown): GatewayError {
  if (e instanceof GatewayError) return e;
  if (e instanceof PaymentError) {
    if (e.kind === "provider") return new GatewayError("payment_provider_unavailable");
    return new GatewayError(
      "payment_unverified",
      text(`결제를 확인할 수 없습니다: ${e.message}`, `The payment could not be verified: ${e.message}`),
    );
  }
  throw e;
}

const notConfigured = () =>
  new GatewayError("payments_not_configured", undefined, { action: { type: "contact_operator", path: "/billing" } });

export function billingRoutes(d: AppDeps, payments: PaymentService) {
  const baseUrl = (request: Request) => d.config.PUBLIC_URL ?? new URL(request.url).origin;
  const service = () => {
    if (!payments.provider) throw notConfigured();
    return payments;
  };
  /** Back from saving a card (auto top-up): to the billing page, saying whether it was saved. */
  const cardReturn = async (q: URLSearchParams) => {
    let outcome = "failed";
    try {
      if (payments.provider && (await payments.cardReturned(q))) outcome = "saved";
    } catch (e) {
      if (!(e instanceof PaymentError)) log.error("card return failed", { error: e });
    }
    return new Response(null, {
      status: 303,
      headers: { location: `/#/billing?card=${outcome}`, "cache-control": "no-store" },
    });
  };
  return (
    new Elysia({ name: "billing", normalize: false })
      .get(
        "/v1/billing",
        async ({ request }) => {
          const user = await d.auth.jwtUser(request);
          await d.auth.settled(user.id);
          const me = await d.users.live(user.id);
          if (!me) throw new GatewayError("unauthorized");
          return {
            provider: payments.provider?.id ?? null,
            topups: payments.provider ? "self_service" : "operator",
            fee_percent: PLATFORM_FEE_PERCENT,
            min_krw: MIN_TOPUP_KRW,
            max_krw: MAX_TOPUP_KRW,
            balance_krw: microToKrw(me.balanceMicro),
          };
        },
        {
          detail: {
            security: AUTH.dashboard,
            tags: ["billing"],
            summary: "How this account buys credits: the provider (null: top-ups by the operator), the fee, the limits",
            responses: ok(BillingInfo),
          },
        },
      )
      .post(
        "/v1/billing/checkout",
        async ({ request, body, set }) => {
          const user = await d.auth.jwtUser(request);
          const svc = service();
          try {
            const { order, checkout } = await svc.start(
              { id: user.id, email: user.email },
              body.amount_krw,
              baseUrl(request),
            );
            const { fee, credited } = topupSplit(order.amountKrw);
            set.status = 201;
            return {
              order_id: order.orderId,
              paid_krw: order.amountKrw,
              fee_krw: fee,
              credited_krw: credited,
              checkout,
            };
          } catch (e) {
            throw paymentGatewayError(e);
          }
        },
        {
          body: t.Object({ amount_krw: Type.Integer({ minimum: MIN_TOPUP_KRW, maximum: MAX_TOPUP_KRW }) }),
          detail: {
            security: AUTH.dashboard,
            tags: ["billing"],
            summary: "Start buying credits: an order with its 3 % fee, and how to reach the provider's checkout",
            description:
              "Nothing is credited here: the ledger credits the net amount once the provider confirms the payment (the return to `/billing/return`, or its webhook), once per payment. Without a provider: 503 `payments_not_configured` (top-ups are by the operator).",
            responses: { ...created(CheckoutStarted), ...errors(422, 502, 503) },
          },
        },
      )
      .get(
        "/v1/billing/payments/:order_id",
        async ({ request, params }) => {
          const user = await d.auth.jwtUser(request);
          const p = await payments.order(params.order_id.slice(0, 100));
          if (!p || p.userId !== user.id) throw notFound();
          return toPayment(p);
        },
        {
          detail: {
            security: AUTH.dashboard,
            tags: ["billing"],
            summary: "One of the account's payments",
            responses: ok(Payment),
          },
        },
      )
      .get(
        "/v1/billing/history",
        async ({ request, query }) => {
          const user = await d.auth.jwtUser(request);
          await d.auth.settled(user.id);
          const limit = Math.min(Math.max(Number(query.limit ?? 200) || 200, 1), 10_000);
          const rows = (await payments.history(user.id, limit)).map(toHistory);
          if (query.format === "csv") {
            const lines = [
              HISTORY_CSV_COLUMNS.join(","),
              ...rows.map((r) => HISTORY_CSV_COLUMNS.map((c) => csvCell(r[c])).join(",")),
            ];
            return new Response(lines.join("\r\n") + "\r\n", {
              headers: {
                "content-type": "text/csv; charset=utf-8",
                "content-disposition": 'attachment; filename="billing-history.csv"',
                "cache-control": "no-store",
              },
            });
          }
          return { items: rows };
        },
        {
          detail: {
            security: AUTH.dashboard,
            tags: ["billing"],
            summary: "Top-ups, fees, refunds and failed payments with the balance after each (`?format=csv`: CSV)",
            parameters: [
              { name: "limit", in: "query", schema: { type: "integer", minimum: 1, maximum: 10000, default: 200 } },
              { name: "format", in: "query", schema: { type: "string", enum: ["json", "csv"] } },
            ],
            responses: { ...ok(BillingHistory), ...answerAs(200, "text/csv", { type: "string" }, "CSV") },
          },
        },
      )
      .post(
        "/v1/billing/webhooks/:provider",
        async ({ params, body, request }) => {
          const svc = service();
          const raw = typeof body === "string" ? body : JSON.stringify(body ?? null);
          try {
            const r = await svc.webhook(params.provider, raw, request.headers);
            log.info("payment webhook", { provider: params.provider, outcome: r });
          } catch (e) {
            const err = paymentGatewayError(e);
            log.warn("payment webhook refused", { provider: params.provider, error: (e as Error).message });
            throw err;
          }
          return { received: true as const };
        },
        {
          detail: {
            security: AUTH.none,
            tags: ["billing"],
            summary: "A payment provider's webhook (believed only once verified)",
            description:
              "Stripe: the `Stripe-Signature` header verified with STRIPE_WEBHOOK_SECRET. Toss Payments and the simulator: the payment the event names is read back from the provider's API with the secret key, and its order and amount compared with ours. A forged or disagreeing delivery is 400 `payment_unverified` and credits nothing; a replay credits nothing.",
            responses: { ...ok(WebhookReceived), ...errors(400, 502, 503) },
          },
        },
      )
      .post(
        "/v1/admin/payments/:order_id/refunds",
        async ({ request, server, params, body }) => {
          await d.auth.admin(request, server);
          const svc = service();
          try {
            const p = await svc.refund(
              params.order_id.slice(0, 100),
              body.amount_krw,
              body.reason ?? "operator refund",
            );
            if (!p) throw notFound();
            return toPayment(p);
          } catch (e) {
            throw paymentGatewayError(e);
          }
        },
        {
          body: t.Object({
            amount_krw: t.Optional(Type.Integer({ minimum: 1, maximum: MAX_TOPUP_KRW })),
            reason: t.Optional(t.String({ minLength: 1, maxLength: 200 })),
          }),
          detail: {
            security: AUTH.admin,
            tags: ["admin"],
            summary: "Refund (part of) a paid top-up at its provider; the credit share is taken back",
            responses: { ...ok(Payment), ...errors(400, 404, 502, 503) },
          },
        },
      )
      // The 402's `action.path`: a client that follows it on the gateway's origin lands on the page.
      .get("/billing", () => new Response(null, { status: 303, headers: { location: "/#/billing" } }), {
        detail: { hide: true },
      })
      .get(
        "/billing/return",
        async ({ query }) => {
          if (query.card) return cardReturn(new URLSearchParams(query as Record<string, string>));
          const orderId = String(query.order_id ?? "").slice(0, 100);
          const target = new URLSearchParams({ order_id: orderId });
          try {
            const p = payments.provider
              ? await payments.returned(orderId, new URLSearchParams(query as Record<string, string>))
              : null;
            target.set("status", p?.status ?? "unknown");
          } catch (e) {
            // The customer still lands on the result page; what failed is said there, not as a 500.
            const err = e instanceof PaymentError || e instanceof GatewayError ? paymentGatewayError(e) : null;
            if (!err) log.error("payment return failed", { error: e });
            target.set("status", "error");
            target.set("code", err?.errorCode ?? "internal_error");
          }
          return new Response(null, {
            status: 303,
            headers: { location: `/#/billing/result?${target}`, "cache-control": "no-store" },
          });
        },
        { detail: { hide: true } },
      )
  );
}
