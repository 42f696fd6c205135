/**
 * Console sessions (refresh-token families, drizzle/0024_console_sessions.sql): the cookie holds
 * `<id>.<secret>`, the row the SHA-256 of the family's current secret only.
 */
import { index, integer, pgTable, text, timestamp, uuid } from "drizzle-orm/pg-core";
import { users } from "./accounts";

export const consoleSessions = pgTable(
  "console_sessions",
  {
    id: uuid("id").primaryKey(),
    userId: uuid("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    /** SHA-256 (hex) of the current refresh token's secret; every refresh replaces it. */
    tokenHash: text("token_hash").notNull(),
    rotations: integer("rotations").notNull().default(0),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
    refreshedAt: timestamp("refreshed_at", { withTimezone: true }).notNull().defaultNow(),
    /** Unused this long (SESSION_IDLE_SECONDS), the session ends. */
    idleExpiresAt: timestamp("idle_expires_at", { withTimezone: true }).notNull(),
    /** The sign-in's absolute end (SESSION_MAX_SECONDS after it). */
    expiresAt: timestamp("expires_at", { withTimezone: true }).notNull(),
    revokedAt: timestamp("revoked_at", { withTimezone: true }),
    /** `sign_out`, `reuse` (a rotated token came back) or `account_gone`. */
    revokedReason: text("revoked_reason"),
  },
  (t) => [index("console_sessions_user_idx").on(t.userId)],
);
