/**
 * Stored Responses-API answers (RESPONSES_STORE=on), owned by the key that made them (within
 * its account). The context, every input item that led to the answer with item references and
 * the previous_response_id chain already expanded, is kept once per account and content in
 * `stored_response_contexts` (a response-cache hit repeating an input adds only its answer),
 * so continuing a chain reads one row and its context; the output items are also kept by id
 * for `item_reference` inputs. `bytes` count toward the account's quota. Rows past
 * `expires_at` are never read and the sweeper deletes them (items with their response).
 */
import { foreignKey, index, integer, jsonb, pgTable, primaryKey, text, timestamp, uuid } from "drizzle-orm/pg-core";

export const storedResponses = pgTable(
  "stored_responses",
  {
    userId: uuid("user_id").notNull(),
    /** `resp_<32 hex>`: unique per account only (it is built from a request id a client may name). */
    id: text("id").notNull(),
    /** The key that made it: the only one that reads, deletes or continues it. */
    keyId: uuid("key_id").notNull(),
    /** The response object as it was answered. */
    response: jsonb("response").notNull(),
    /** SHA-256 (hex) of its context, a row of `stored_response_contexts` of the same account. */
    contextHash: text("context_hash").notNull(),
    /** Size of `response` as stored text. */
    bytes: integer("bytes").notNull().default(0),
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

export const storedResponseContexts = pgTable(
  "stored_response_contexts",
  {
    userId: uuid("user_id").notNull(),
    hash: text("hash").notNull(),
    context: jsonb("context").notNull(),
    bytes: integer("bytes").notNull(),
    /** The latest expiry of the responses naming it. */
    expiresAt: timestamp("expires_at", { withTimezone: true }).notNull(),
  },
  (t) => [
    primaryKey({ name: "stored_response_contexts_pk", columns: [t.userId, t.hash] }),
    index("stored_response_contexts_expires_idx").on(t.expiresAt),
  ],
);
