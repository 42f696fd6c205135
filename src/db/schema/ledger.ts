/**
 * Money: holds, the ledger, per-month counters and usage events. Rows here change only
 * through the SQL functions of the `ledger_functions` migration (gw_hold, gw_settle,
 * gw_release, gw_topup), each one atomic statement from the application's side.
 */
import { sql } from "drizzle-orm";
import {
  bigint,
  boolean,
  index,
  integer,
  pgTable,
  primaryKey,
  text,
  timestamp,
  uuid,
  bigserial,
  jsonb,
} from "drizzle-orm/pg-core";

export const holds = pgTable(
  "holds",
  {
    /** The request id: one hold per request, so a request can never be charged twice. */
    id: uuid("id").primaryKey(),
    userId: uuid("user_id").notNull(),
    keyId: uuid("key_id"),
    /** Organizations whose member budget this hold counts against. */
    orgIds: uuid("org_ids").array().notNull().default(sql`'{}'::uuid[]`),
    month: text("month").notNull(),
    amountMicro: bigint("amount_micro", { mode: "bigint" }).notNull(),
    tokens: bigint("tokens", { mode: "number" }).notNull().default(0),
    /** `open`, `settled` or `released`. */
    status: text("status").notNull().default("open"),
    chargedMicro: bigint("charged_micro", { mode: "bigint" }),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
    expiresAt: timestamp("expires_at", { withTimezone: true }).notNull(),
    closedAt: timestamp("closed_at", { withTimezone: true }),
    /**
     * A credit lease: one hold many calls of a busy key are held against in memory, charged
     * against it in batches (drizzle/0011, src/core/billing/leasing.ts); id is not a request id.
     */
    lease: boolean("lease").notNull().default(false),
    /** A lease's last ledger entry whose money has moved (drizzle/0026: gw_lease_move). */
    movedUpto: bigint("moved_upto", { mode: "number" }).notNull().default(0),
  },
  (t) => [index("holds_open_idx").on(t.expiresAt).where(sql`status = 'open'`), index("holds_user_idx").on(t.userId)],
);

export const ledgerEntries = pgTable(
  "ledger_entries",
  {
    id: bigserial("id", { mode: "number" }).primaryKey(),
    userId: uuid("user_id").notNull(),
    /** `topup` (positive) or `charge` (negative). */
    kind: text("kind").notNull(),
    amountMicro: bigint("amount_micro", { mode: "bigint" }).notNull(),
    /** For charges: the request id; unique so that money never moves twice. */
    requestId: uuid("request_id").unique(),
    meta: jsonb("meta"),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
    /** For a leased call's charge: its lease, whose trim or close moves the money (drizzle/0026). */
    leaseId: uuid("lease_id"),
  },
  (t) => [
    index("ledger_user_idx").on(t.userId, t.createdAt),
    index("ledger_lease_idx").on(t.leaseId, t.id).where(sql`lease_id IS NOT NULL`),
  ],
);

export const keyMonthly = pgTable(
  "key_monthly",
  {
    keyId: uuid("key_id").notNull(),
    month: text("month").notNull(),
    spentMicro: bigint("spent_micro", { mode: "bigint" }).notNull().default(sql`0`),
    heldMicro: bigint("held_micro", { mode: "bigint" }).notNull().default(sql`0`),
    tokens: bigint("tokens", { mode: "number" }).notNull().default(0),
    heldTokens: bigint("held_tokens", { mode: "number" }).notNull().default(0),
    requests: bigint("requests", { mode: "number" }).notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.keyId, t.month] })],
);

export const orgMemberMonthly = pgTable(
  "org_member_monthly",
  {
    orgId: uuid("org_id").notNull(),
    userId: uuid("user_id").notNull(),
    month: text("month").notNull(),
    spentMicro: bigint("spent_micro", { mode: "bigint" }).notNull().default(sql`0`),
    heldMicro: bigint("held_micro", { mode: "bigint" }).notNull().default(sql`0`),
  },
  (t) => [primaryKey({ columns: [t.orgId, t.userId, t.month] })],
);

/**
 * One row per finished model call (success or failure): the source of stats and reports.
 * Partitioned by UTC month of `created_at` (drizzle/0027, which drizzle-kit does not express):
 * keys are per partition, so the receipt against a second charge is the hold's status or the
 * ledger entry's unique `request_id`, not this table.
 */
export const usageEvents = pgTable(
  "usage_events",
  {
    id: bigserial("id", { mode: "number" }).notNull(),
    requestId: uuid("request_id").notNull(),
    userId: uuid("user_id").notNull(),
    keyId: uuid("key_id"),
    model: text("model").notNull(),
    provider: text("provider"),
    maker: text("maker"),
    modality: text("modality").notNull().default("text"),
    app: text("app"),
    status: integer("status").notNull(),
    promptTokens: integer("prompt_tokens").notNull().default(0),
    completionTokens: integer("completion_tokens").notNull().default(0),
    cachedTokens: integer("cached_tokens").notNull().default(0),
    cacheWriteTokens: integer("cache_write_tokens").notNull().default(0),
    costMicro: bigint("cost_micro", { mode: "bigint" }).notNull().default(sql`0`),
    fxMilli: bigint("fx_milli", { mode: "bigint" }),
    latencyMs: integer("latency_ms"),
    cached: boolean("cached").notNull().default(false),
    /** `chat`, `responses`, `messages`, `embeddings` or `video`; null on rows from before drizzle/0018. */
    api: text("api"),
    streamed: boolean("streamed"),
    /** From the request to the stream's first upstream byte (streams only). */
    ttftMs: integer("ttft_ms"),
    /** A failed call's error code (`upstream_error`, `client_closed`, ...). */
    errorCode: text("error_code"),
    /** A routing-policy call's X-Policy-Decision (`<engine>; policy=<slug>; …`). */
    policyDecision: text("policy_decision"),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ columns: [t.id, t.createdAt] }),
    index("usage_events_request_idx").on(t.requestId),
    index("usage_events_user_idx").on(t.userId, t.createdAt),
    index("usage_events_key_idx").on(t.keyId, t.createdAt),
  ],
);

/** Operator top-ups with an Idempotency-Key: written with the credit by gw_topup_once (migration 0021). */
export const topupIdempotency = pgTable("topup_idempotency", {
  idemKey: text("idem_key").primaryKey(),
  userId: uuid("user_id").notNull(),
  bodyHash: text("body_hash").notNull(),
  paidKrw: bigint("paid_krw", { mode: "number" }).notNull(),
  /** The balance right after the credit: what a replay answers. */
  balanceMicro: bigint("balance_micro", { mode: "bigint" }).notNull(),
  createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
});

/** The attempts of a call that needed more than one (drizzle/0025; src/core/chat/trail.ts). */
export const attemptTrails = pgTable(
  "attempt_trails",
  {
    requestId: uuid("request_id").primaryKey(),
    userId: uuid("user_id").notNull(),
    attempts: jsonb("attempts").notNull(),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [index("attempt_trails_user_idx").on(t.userId, t.createdAt)],
);
