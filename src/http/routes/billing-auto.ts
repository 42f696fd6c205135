/**
 * Auto top-up (docs/payments.md, "Auto top-up"): a card saved at the provider, a threshold and
 * an amount; off by default. The charge itself is the auto top-up job's (src/boot/payments.ts),
 * through an order like a checkout's, so it is credited once and shows in the history.
 */
import { Elysia, t } from "elysia";
import { Type } from "@sinclair/typebox";
import { GatewayError, text } from "../../core/errors";
import { PaymentError } from "../../core/payments/port";
import { MAX_TOPUP_KRW, MIN_TOPUP_KRW, type PaymentService } from "../../core/payments/service";
import type { AppDeps } from "../deps";
import { AUTH } from "../security";
import { created, errors, noContent, ok } from "../openapi/describe";
import { AutoTopup, CardRegistration } from "../openapi/billing-shapes";
import { paymentGatewayError } from "./billing";

async function view(payments: PaymentService, userId: string) {
  const { supported, row } = await payments.autoTopup(userId);
  return {
    supported,
    enabled: row?.enabled ?? false,
    threshold_krw: row?.thresholdKrw ?? 0,
    amount_krw: row?.amountKrw ?? 0,
    card: row?.billingKey ? (row.cardLabel ?? "card") : null,
    last_error: row?.lastError ?? null,
  };
}

/** A request the account's state does not allow (no card yet, a provider without saved cards): 409. */
function refused(e: unknown): GatewayError {
  if (e instanceof PaymentError && e.kind === "mismatch")
    return new GatewayError(
      "conflict",
      text(`자동 충전을 설정할 수 없습니다: ${e.message}`, `Auto top-up cannot be set: ${e.message}`),
    );
  return paymentGatewayError(e);
}

export function billingAutoRoutes(d: AppDeps, payments: PaymentService) {
  const baseUrl = (request: Request) => d.config.PUBLIC_URL ?? new URL(request.url).origin;
  const configured = () => {
    if (!payments.provider) throw new GatewayError("payments_not_configured");
  };
  const doc = (summary: string, responses: Record<string, any>) => ({
    detail: { security: AUTH.dashboard, tags: ["billing"], summary, responses },
  });
  return new Elysia({ name: "billing-auto", normalize: false })
    .get(
      "/v1/billing/auto-topup",
      async ({ request }) => view(payments, (await d.auth.jwtUser(request)).id),
      doc(
        "The account's auto top-up: off by default; `supported` says whether the provider can save cards",
        ok(AutoTopup),
      ),
    )
    .put(
      "/v1/billing/auto-topup",
      async ({ request, body }) => {
        const user = await d.auth.jwtUser(request);
        configured();
        try {
          await payments.configureAuto(user.id, body.enabled, body.threshold_krw, body.amount_krw);
        } catch (e) {
          throw refused(e);
        }
        return view(payments, user.id);
      },
      {
        body: t.Object({
          enabled: t.Boolean(),
          threshold_krw: Type.Integer({ minimum: 0, maximum: MAX_TOPUP_KRW }),
          amount_krw: Type.Integer({ minimum: MIN_TOPUP_KRW, maximum: MAX_TOPUP_KRW }),
        }),
        ...doc(
          "Turn auto top-up on or off: when the free credit falls under the threshold, the amount is charged to the saved card (3 % fee taken)",
          {
            ...ok(AutoTopup),
            ...errors(409, 422, 503),
          },
        ),
      },
    )
    .post(
      "/v1/billing/auto-topup/card",
      async ({ request, set }) => {
        const user = await d.auth.jwtUser(request);
        configured();
        try {
          const checkout = await payments.registerCard({ id: user.id, email: user.email }, baseUrl(request));
          set.status = 201;
          return { checkout };
        } catch (e) {
          throw refused(e);
        }
      },
      doc("Save a card at the provider for auto top-up: where to send the customer", {
        ...created(CardRegistration),
        ...errors(409, 502, 503),
      }),
    )
    .delete(
      "/v1/billing/auto-topup/card",
      async ({ request, set }) => {
        const user = await d.auth.jwtUser(request);
        await payments.removeCard(user.id);
        set.status = 204;
        return null;
      },
      doc("Forget the saved card (auto top-up turns off)", noContent()),
    );
}
