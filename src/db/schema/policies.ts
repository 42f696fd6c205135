/**
 * Routing policies (`orch/<slug>`): one row per policy, entries and the config DSL as JSON.
 * A slug is unique per creating user and, for organization policies, per organization too,
 * so a call by slug always finds at most one own policy and one per organization.
 */
import { sql } from "drizzle-orm";
import { boolean, index, jsonb, pgTable, text, timestamp, uniqueIndex, uuid } from "drizzle-orm/pg-core";
import { orgs, users } from "./accounts";

/** A stored entry: the model in short form (`model` or `model@provider`), retries, weight. */
export interface StoredPolicyEntry {
  model: string;
  retries: number;
  weight?: number;
}

export const routingPolicies = pgTable(
  "routing_policies",
  {
    id: uuid("id").primaryKey().default(sql`gen_random_uuid()`),
    /** The creator; personal policies belong to them alone. */
    userId: uuid("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    /** Set for organization policies: every member may call and list them. */
    orgId: uuid("org_id").references(() => orgs.id, { onDelete: "cascade" }),
    slug: text("slug").notNull(),
    displayName: text("display_name").notNull(),
    policyType: text("policy_type").notNull(),
    entries: jsonb("entries").$type<StoredPolicyEntry[]>().notNull(),
    config: jsonb("config").$type<Record<string, unknown>>().notNull().default(sql`'{}'::jsonb`),
    isActive: boolean("is_active").notNull().default(true),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp("updated_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex("routing_policies_user_slug_uq").on(t.userId, t.slug),
    uniqueIndex("routing_policies_org_slug_uq").on(t.orgId, t.slug).where(sql`org_id is not null`),
    index("routing_policies_org_idx").on(t.orgId),
  ],
);
