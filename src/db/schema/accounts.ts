/** Accounts, organizations and operator settings. */
import { sql } from "drizzle-orm";
import { bigint, boolean, index, jsonb, pgTable, primaryKey, text, timestamp, uuid } from "drizzle-orm/pg-core";

export const users = pgTable("users", {
  id: uuid("id").primaryKey().default(sql`gen_random_uuid()`),
  email: text("email").notNull().unique(),
  passwordHash: text("password_hash").notNull(),
  industry: text("industry").notNull().default("general"),
  regulated: boolean("regulated").notNull().default(false),
  xborderTrainingConsent: boolean("xborder_training_consent").notNull().default(false),
  /** Credits in micro-won. Only the ledger functions change these two columns. */
  balanceMicro: bigint("balance_micro", { mode: "bigint" }).notNull().default(sql`0`),
  heldMicro: bigint("held_micro", { mode: "bigint" }).notNull().default(sql`0`),
  deletedAt: timestamp("deleted_at", { withTimezone: true }),
  createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
});

export const orgs = pgTable("orgs", {
  id: uuid("id").primaryKey().default(sql`gen_random_uuid()`),
  name: text("name").notNull(),
  createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
});

export const orgMembers = pgTable(
  "org_members",
  {
    orgId: uuid("org_id")
      .notNull()
      .references(() => orgs.id, { onDelete: "cascade" }),
    userId: uuid("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    role: text("role").notNull(),
    /** Monthly spending cap of this member in KRW; null is unlimited. */
    monthlyBudgetKrw: bigint("monthly_budget_krw", { mode: "number" }),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.orgId, t.userId] }), index("org_members_user_idx").on(t.userId)],
);

/** Operator settings (`routing.policies_enabled`, ...): one row per key, JSON value. */
export const settings = pgTable("settings", {
  key: text("key").primaryKey(),
  value: jsonb("value").notNull(),
  updatedAt: timestamp("updated_at", { withTimezone: true }).notNull().defaultNow(),
});
