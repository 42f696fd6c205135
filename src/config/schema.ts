/**
 * The whole environment as one TypeBox schema. Validated once at boot; every problem is
 * listed at once so an operator fixes a bad deployment in one pass.
 */
import { Type as T, type Static } from "@sinclair/typebox";

const Int = (min: number, max: number, def: number, description: string) =>
  T.Integer({ minimum: min, maximum: max, default: def, description });

export const EnvSchema = T.Object({
  PORT: Int(0, 65535, 8080, "TCP port the gateway listens on"),
  HOST: T.String({ default: "0.0.0.0", minLength: 1, description: "Address the gateway listens on" }),
  DATABASE_URL: T.Optional(T.String({ pattern: "^postgres(ql)?://", description: "PostgreSQL URL; unset means embedded PGlite" })),
  DATA_DIR: T.String({ default: "./data", minLength: 1, description: "PGlite data directory and local file storage" }),
  ADMIN_TOKEN: T.Optional(T.String({ minLength: 16, description: "Operator token for /v1/admin/*" })),
  JWT_SECRET: T.Optional(T.String({ minLength: 32, description: "HS256 secret for dashboard tokens" })),
  JWT_TTL_SECONDS: Int(60, 30 * 86400, 3600, "Lifetime of a dashboard access token"),
  REDIS_URL: T.Optional(T.String({ pattern: "^rediss?://", description: "Redis for rate limits shared across instances" })),
  RATE_LIMIT_RPM: Int(0, 1_000_000, 60, "Requests per minute per API key (0 = off)"),
  FX_USD_KRW: T.Number({ exclusiveMinimum: 0, maximum: 100000, default: 1400, description: "USD→KRW rate for charges" }),
  MAX_BODY_BYTES: Int(1024, 1024 * 1024 * 1024, 50 * 1024 * 1024, "Request body limit (413 above)"),
  TRUSTED_PROXIES: T.String({ default: "", description: "Comma-separated IPs/CIDRs whose X-Forwarded-For is believed" }),
  LOG_LEVEL: T.Union([T.Literal("debug"), T.Literal("info"), T.Literal("warn"), T.Literal("error"), T.Literal("silent")], { default: "info" }),
  DEMO_MODE: T.Optional(T.Union([T.Literal("true"), T.Literal("false")], { description: "Force demo mode on/off (default: on when DATABASE_URL is unset)" })),
  UPSTREAM_FIRST_BYTE_TIMEOUT_MS: Int(100, 600_000, 60_000, "Deadline for an upstream's first byte"),
  UPSTREAM_IDLE_TIMEOUT_MS: Int(100, 600_000, 60_000, "Deadline between two upstream stream chunks"),
  RETRY_BASE_MS: Int(0, 10_000, 200, "Base of the jittered exponential backoff between upstream retries"),
  HOLD_TTL_SECONDS: Int(30, 86400, 900, "A chat hold older than this is released by the sweeper"),
  RESPONSE_CACHE_TTL_SECONDS: Int(1, 30 * 86400, 3600, "Lifetime of a response-cache entry"),
  SEMANTIC_CACHE_THRESHOLD: T.Number({ minimum: 0, maximum: 1, default: 0.95, description: "Cosine similarity for a semantic cache hit" }),
  STATS_MIN_DISTINCT_KEYS: T.Optional(T.Integer({ minimum: 1, maximum: 1000, description: "Privacy threshold of the public stats (default 3, 1 in demo mode)" })),
  STATS_ROLLUP_INTERVAL_MS: T.Optional(T.Integer({ minimum: 0, maximum: 60_000, description: "Pause between stats rollup runs (default 5000, 1000 in demo mode; 0 = no rollup job on this instance)" })),
  CATALOG_PATH: T.Optional(T.String({ minLength: 1, description: "Alternative catalog file" })),
  SIM_PORT: Int(0, 65535, 0, "Port of the in-process upstream simulator (0 = any free port)"),
  WEB_SEARCH_PRICE_KRW: T.Number({ minimum: 0, maximum: 100000, default: 7, description: "Price of one web-plugin search (Brave Search), charged with the call" }),
  WEB_SEARCH_TIMEOUT_MS: Int(100, 60_000, 5000, "Deadline of one web-plugin search"),
});

export type Env = Static<typeof EnvSchema>;
