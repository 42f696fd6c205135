/**
 * Stored Responses-API answers (RESPONSES_STORE=on), owned by the account of the key that made
 * them. `context` is every input item that led to the answer, with item references and the
 * previous_response_id chain already expanded, so continuing a chain reads one row; the
 * output items are also kept by id for `item_reference` inputs. Rows past `expires_at` are
 * never read and the sweeper deletes them (items with their response).
 */
import { foreignKey, index, jsonb, pgTable, primaryKey, text, timestamp, uuid } from "drizzle-orm/pg-core";

export const storedResponses = pgTable(
  "stored_responses",
  {
    userId: uuid("user_id").notNull(),
    /** `resp_<32 hex>`: unique per account only (it is built from a request id a client may name). */
    id: text("id").notNull(),
    /** The response object as it was answered. */
    response: jsonb("response").notNull(),
    context: jsonb("context").notNull(),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
    expiresAt: timestamp("expires_at", { withTimezone: true }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.userId, t.id] }), index("stored_responses_expires_idx").on(t.expiresAt)],
);

export const storedResponseItems = pgTable(
  "stored_response_items",
  {
    userId: uuid("user_id").notNull(),
    /** `msg_…` / `fc_…`: an output item's id. */
    id: text("id").notNull(),
    responseId: text("response_id").notNull(),
    item: jsonb("item").notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.userId, t.id] }),
    foreignKey({
      name: "stored_response_items_response_fk",
      columns: [t.userId, t.responseId],
      foreignColumns: [storedResponses.userId, storedResponses.id],
    }).onDelete("cascade"),
    index("stored_response_items_response_idx").on(t.userId, t.responseId),
  ],
);
