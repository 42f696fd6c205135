/**
 * Self-service top-ups (drizzle/0023): one row per order. Rows change state only through the
 * SQL functions of that migration (gw_payment_paid, gw_payment_failed, gw_payment_refunded),
 * which move the ledger in the same transaction (docs/payments.md).
 */
import { bigint, boolean, index, pgTable, text, timestamp, uniqueIndex, uuid } from "drizzle-orm/pg-core";

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

/** Auto top-up per account (drizzle/0023): a saved card's billing key, the threshold and the amount; off by default. */
export const autoTopups = pgTable(
  "auto_topups",
  {
    userId: uuid("user_id").primaryKey(),
    provider: text("provider").notNull(),
    /** The opaque customer id the provider knows the account by. */
    customerKey: text("customer_key").notNull(),
    /** The provider's saved-card token (Toss billingKey); useless without the secret key. */
    billingKey: text("billing_key"),
    cardLabel: text("card_label"),
    enabled: boolean("enabled").notNull().default(false),
    thresholdKrw: bigint("threshold_krw", { mode: "number" }).notNull().default(0),
    amountKrw: bigint("amount_krw", { mode: "number" }).notNull().default(0),
    /** Taken by the instance about to charge (a claim), so a shortfall is charged once. */
    lastAttemptAt: timestamp("last_attempt_at", { withTimezone: true }),
    lastError: text("last_error"),
    updatedAt: timestamp("updated_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [uniqueIndex("auto_topups_customer_uq").on(t.customerKey)],
);
