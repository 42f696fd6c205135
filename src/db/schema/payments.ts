/**
 * Self-service top-ups (drizzle/0023): one row per order. Rows change state only through the
 * SQL functions of that migration (gw_payment_paid, gw_payment_failed, gw_payment_refunded),
 * which move the ledger in the same transaction (docs/payments.md).
 */
import { bigint, index, pgTable, text, timestamp, uniqueIndex, uuid } from "drizzle-orm/pg-core";

export const payments = pgTable(
  "payments",
  {
    /** Ours (`ord_…`), sent to the provider as its order id / client reference. */
    orderId: text("order_id").primaryKey(),
    userId: uuid("user_id").notNull(),
    /** `toss`, `stripe` or `sim`. */
    provider: text("provider").notNull(),
    /** Toss's paymentKey, Stripe's PaymentIntent id, the simulator's paymentKey; unique per provider. */
    providerPaymentId: text("provider_payment_id"),
    /** What the customer pays (KRW, whole won). */
    amountKrw: bigint("amount_krw", { mode: "number" }).notNull(),
    /** The platform fee, ceil(3 %), taken from the amount paid. */
    feeKrw: bigint("fee_krw", { mode: "number" }).notNull(),
    /** What the ledger credits when paid: (amount − fee) in micro-won. */
    creditMicro: bigint("credit_micro", { mode: "bigint" }).notNull(),
    /** `pending`, `paid`, `failed`, `canceled`, `partially_refunded` or `refunded`. */
    status: text("status").notNull().default("pending"),
    refundedKrw: bigint("refunded_krw", { mode: "number" }).notNull().default(0),
    failureCode: text("failure_code"),
    failureMessage: text("failure_message"),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp("updated_at", { withTimezone: true }).notNull().defaultNow(),
    paidAt: timestamp("paid_at", { withTimezone: true }),
  },
  (t) => [
    uniqueIndex("payments_provider_payment_uq").on(t.provider, t.providerPaymentId),
    index("payments_user_idx").on(t.userId, t.createdAt),
  ],
);
