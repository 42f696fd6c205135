/**
 * Statistics rollups: usage events folded into hourly buckets by the stats-rollup job, so the
 * public statistics and the usage report read a number of rows bounded by hours × distinct
 * names, never by traffic. Only the rollup job writes here (src/db/repos/rollups.ts).
 */
import { sql } from "drizzle-orm";
import {
  bigint,
  boolean,
  date,
  jsonb,
  pgTable,
  primaryKey,
  smallint,
  text,
  timestamp,
  uuid,
} from "drizzle-orm/pg-core";

const counter = (name: string) => bigint(name, { mode: "number" }).notNull().default(0);

const modelColumns = () => ({
  bucket: timestamp("bucket", { withTimezone: true }).notNull(),
  model: text("model").notNull(),
  /** Empty when the call failed before any provider was reached. */
  provider: text("provider").notNull(),
  maker: text("maker").notNull(),
  modality: text("modality").notNull(),
  success: boolean("success").notNull(),
  calls: counter("calls"),
  /** Calls answered from the response cache: counted as calls, their tokens are not. */
  cacheHits: counter("cache_hits"),
  promptTokens: counter("prompt_tokens"),
  completionTokens: counter("completion_tokens"),
  costMicro: bigint("cost_micro", { mode: "bigint" }).notNull().default(sql`0`),
});

/**
 * Per hour (UTC), model, provider, maker, modality and outcome (status < 400 or not). The
 * `_daily` twin holds the same per UTC day, so a 30-day or 24-week window reads days for
 * its interior and hours only at its edges.
 */
export const statsModelHourly = pgTable("stats_model_hourly", modelColumns(), (t) => [
  primaryKey({ columns: [t.bucket, t.model, t.provider, t.maker, t.modality, t.success] }),
]);
export const statsModelDaily = pgTable("stats_model_daily", modelColumns(), (t) => [
  primaryKey({ columns: [t.bucket, t.model, t.provider, t.maker, t.modality, t.success] }),
]);

const appColumns = () => ({
  bucket: timestamp("bucket", { withTimezone: true }).notNull(),
  app: text("app").notNull(),
  modality: text("modality").notNull(),
  success: boolean("success").notNull(),
  calls: counter("calls"),
  cacheHits: counter("cache_hits"),
  promptTokens: counter("prompt_tokens"),
  completionTokens: counter("completion_tokens"),
});

/** Per hour (and day), app (X-Title / HTTP-Referer), modality and outcome. Calls without an app are not here. */
export const statsAppHourly = pgTable("stats_app_hourly", appColumns(), (t) => [
  primaryKey({ columns: [t.bucket, t.app, t.modality, t.success] }),
]);
export const statsAppDaily = pgTable("stats_app_daily", appColumns(), (t) => [
  primaryKey({ columns: [t.bucket, t.app, t.modality, t.success] }),
]);

const accountColumns = () => ({
  bucket: timestamp("bucket", { withTimezone: true }).notNull(),
  dim: text("dim").notNull(),
  name: text("name").notNull(),
  /** The account (users.id) behind the calls: keys are free to mint, accounts are what count. */
  accountId: uuid("account_id").notNull(),
});

/**
 * Distinct accounts per hour (and day) and name (`dim` = `model` or `app`), for the privacy
 * threshold. At most STATS_MIN_DISTINCT_ACCOUNTS rows per (bucket, dim, name): "at least N
 * distinct accounts in a window" stays exact with capped sets (if the union of the capped sets
 * covering a window is smaller than N, none of them was capped), and the rows read per
 * request stay bounded.
 */
export const statsHourlyAccounts = pgTable("stats_hourly_accounts", accountColumns(), (t) => [
  primaryKey({ columns: [t.bucket, t.dim, t.name, t.accountId] }),
]);
export const statsDailyAccounts = pgTable("stats_daily_accounts", accountColumns(), (t) => [
  primaryKey({ columns: [t.bucket, t.dim, t.name, t.accountId] }),
]);

/** Per account, UTC day and model: the usage report. */
export const usageDaily = pgTable(
  "usage_daily",
  {
    userId: uuid("user_id").notNull(),
    day: date("day", { mode: "string" }).notNull(),
    model: text("model").notNull(),
    requests: counter("requests"),
    failedRequests: counter("failed_requests"),
    cacheHits: counter("cache_hits"),
    promptTokens: counter("prompt_tokens"),
    completionTokens: counter("completion_tokens"),
    costMicro: bigint("cost_micro", { mode: "bigint" }).notNull().default(sql`0`),
  },
  (t) => [primaryKey({ columns: [t.userId, t.day, t.model] })],
);

/**
 * The rollup job's progress: one row (id 1), locked for the duration of a batch so that two
 * runners never fold the same event twice. `watermark` is the highest usage_events.id folded;
 * `holes` are ids below it that were not visible yet (a transaction still in flight), kept
 * with the time they were first seen until they show up or expire.
 */
export const statsRollupState = pgTable("stats_rollup_state", {
  id: smallint("id").primaryKey(),
  watermark: bigint("watermark", { mode: "number" }).notNull().default(0),
  holes: jsonb("holes").notNull().default(sql`'[]'::jsonb`),
  /** Incremented by every batch that folded at least one event: readers key their caches on it. */
  version: bigint("version", { mode: "number" }).notNull().default(0),
  eventsFolded: bigint("events_folded", { mode: "number" }).notNull().default(0),
  updatedAt: timestamp("updated_at", { withTimezone: true }).notNull().defaultNow(),
  prunedAt: timestamp("pruned_at", { withTimezone: true }),
});
