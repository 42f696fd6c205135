/** API keys (standard, delegated, BYOK, provisioned children) and management keys. */
import { sql } from "drizzle-orm";
import { bigint, boolean, index, jsonb, pgTable, text, timestamp, uuid } from "drizzle-orm/pg-core";
import { users } from "./accounts";

export const managementKeys = pgTable(
  "management_keys",
  {
    id: uuid("id").primaryKey().default(sql`gen_random_uuid()`),
    userId: uuid("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    keyHash: text("key_hash").notNull().unique(),
    keyPrefix: text("key_prefix").notNull(),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
    lastUsedAt: timestamp("last_used_at", { withTimezone: true }),
    deletedAt: timestamp("deleted_at", { withTimezone: true }),
  },
  (t) => [index("management_keys_user_idx").on(t.userId)],
);

export const apiKeys = pgTable(
  "api_keys",
  {
    id: uuid("id").primaryKey().default(sql`gen_random_uuid()`),
    userId: uuid("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    /** `standard`, `delegated` (first-party; may send charge_amount_krw) or `byok`. */
    kind: text("kind").notNull().default("standard"),
    /** Set on keys provisioned through a management key. */
    managementKeyId: uuid("management_key_id"),
    name: text("name").notNull().default("Default"),
    keyHash: text("key_hash").notNull().unique(),
    keyPrefix: text("key_prefix").notNull(),
    byokProvider: text("byok_provider"),
    byokSecret: text("byok_secret"),
    allowedModels: jsonb("allowed_models").$type<string[] | null>(),
    monthlyBudgetKrw: bigint("monthly_budget_krw", { mode: "number" }),
    monthlyTokenLimit: bigint("monthly_token_limit", { mode: "number" }),
    expiresAt: timestamp("expires_at", { withTimezone: true }),
    isActive: boolean("is_active").notNull().default(true),
    piiMaskingEnabled: boolean("pii_masking_enabled").notNull().default(true),
    responseCacheMode: text("response_cache_mode").notNull().default("off"),
    /** Hedged requests for this key's calls (docs/hedging.md). */
    hedge: boolean("hedge").notNull().default(false),
    scopes: jsonb("scopes").$type<string[] | null>(),
    ipAllowlist: jsonb("ip_allowlist").$type<string[] | null>(),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp("updated_at", { withTimezone: true }).notNull().defaultNow(),
    lastUsedAt: timestamp("last_used_at", { withTimezone: true }),
    deletedAt: timestamp("deleted_at", { withTimezone: true }),
  },
  (t) => [index("api_keys_user_idx").on(t.userId), index("api_keys_mgmt_idx").on(t.managementKeyId)],
);
