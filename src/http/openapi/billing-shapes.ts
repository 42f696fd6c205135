/** Response bodies of /v1/billing (docs/payments.md), as documentation. */
import { Type as T, type TSchema } from "@sinclair/typebox";
import { named } from "./describe";

const Nullable = <S extends TSchema>(s: S) => T.Union([s, T.Null()]);
const Time = T.String({ format: "date-time" });
const Krw = T.Number({ description: "Korean won" });

export const BillingInfo = named(
  "BillingInfo",
  T.Object({
    provider: Nullable(T.Union([T.Literal("toss"), T.Literal("stripe"), T.Literal("sim")])),
    topups: T.Union([T.Literal("self_service"), T.Literal("operator")]),
    fee_percent: T.Number(),
    min_krw: T.Integer(),
    max_krw: T.Integer(),
    balance_krw: Krw,
  }),
);

export const Payment = named(
  "Payment",
  T.Object({
    order_id: T.String(),
    provider: T.String(),
    status: T.Union(
      ["pending", "paid", "failed", "canceled", "partially_refunded", "refunded"].map((s) => T.Literal(s)),
    ),
    paid_krw: T.Integer({ description: "What the customer pays" }),
    fee_krw: T.Integer({ description: "The 3 % platform fee, taken from the amount paid" }),
    credited_krw: T.Integer({ description: "What the ledger credits once paid" }),
    refunded_krw: T.Integer(),
    failure_code: Nullable(T.String()),
    failure_message: Nullable(T.String()),
    created_at: Time,
    paid_at: Nullable(Time),
  }),
);

export const CheckoutStarted = named(
  "CheckoutStarted",
  T.Object({
    order_id: T.String(),
    paid_krw: T.Integer(),
    fee_krw: T.Integer(),
    credited_krw: T.Integer(),
    checkout: T.Union([
      T.Object({ type: T.Literal("redirect"), url: T.String() }),
      T.Object({
        type: T.Literal("toss_billing_auth"),
        client_key: T.String(),
        customer_key: T.String(),
        success_url: T.String(),
        fail_url: T.String(),
      }),
      T.Object({
        type: T.Literal("toss_widget"),
        client_key: T.String(),
        customer_key: T.String(),
        order_id: T.String(),
        order_name: T.String(),
        amount_krw: T.Integer(),
        success_url: T.String(),
        fail_url: T.String(),
      }),
    ]),
  }),
);

export const BillingHistory = named(
  "BillingHistory",
  T.Object({
    items: T.Array(
      T.Object({
        at: Time,
        type: T.Union(["topup", "operator_topup", "refund", "failed", "canceled", "pending"].map((s) => T.Literal(s))),
        order_id: Nullable(T.String()),
        provider: Nullable(T.String()),
        paid_krw: Nullable(T.Integer()),
        fee_krw: Nullable(T.Integer()),
        amount_krw: Nullable(T.String({ description: "Exact KRW the ledger moved (negative for a refund)" })),
        balance_krw: Nullable(T.String({ description: "Exact balance right after this entry" })),
        failure_code: Nullable(T.String()),
      }),
    ),
  }),
);

export const AutoTopup = named(
  "AutoTopup",
  T.Object({
    supported: T.Boolean({ description: "Whether this deployment's provider can save cards" }),
    enabled: T.Boolean(),
    threshold_krw: T.Integer(),
    amount_krw: T.Integer(),
    card: Nullable(T.String({ description: "The saved card, as the provider shows it (masked)" })),
    last_error: Nullable(T.String({ description: "Why the last automatic charge failed (auto top-up is then off)" })),
  }),
);

export const CardRegistration = named("CardRegistration", T.Object({ checkout: CheckoutStarted.properties.checkout }));

export const WebhookReceived = named("WebhookReceived", T.Object({ received: T.Literal(true) }));
