/**
 * Routing feedback: one rating per request (a second one replaces the first), stored with
 * the model and provider that answered so the routing engine can read it per model without
 * joining usage_events. Ownership is checked against usage_events at write time.
 */
import { sql } from "drizzle-orm";
import { check, index, pgTable, smallint, text, timestamp, uuid } from "drizzle-orm/pg-core";

export const responseFeedback = pgTable(
  "response_feedback",
  {
    /** The request id (usage_events.request_id; the UUID inside a `resp_` id). */
    requestId: uuid("request_id").primaryKey(),
    userId: uuid("user_id").notNull(),
    /** -1 (down), 0 (neutral) or 1 (up). */
    rating: smallint("rating").notNull(),
    comment: text("comment"),
    category: text("category"),
    model: text("model").notNull(),
    provider: text("provider"),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp("updated_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    check("response_feedback_rating_check", sql`${t.rating} between -1 and 1`),
    index("response_feedback_model_idx").on(t.model, t.updatedAt),
    index("response_feedback_user_idx").on(t.userId, t.updatedAt),
  ],
);
