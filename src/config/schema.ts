/**
 * The whole environment as one TypeBox schema. Validated once at boot; every problem is
 * listed at once so an operator fixes a bad deployment in one pass.
 */
import { Type as T, type Static } from "@sinclair/typebox";
import { KEY_TEXT_PATTERN } from "../lib/secret-box";
import { Bool, Int } from "./schema-kinds";
import { CONSOLE_SETTINGS } from "./schema-console";
import { DATA_SETTINGS } from "./schema-data";
export { BOOL_SPELLINGS, parseBool } from "./schema-kinds";

export const EnvSchema = T.Object({
  PORT: Int(0, 65535, 8080, "TCP port the gateway listens on"),
  HOST: T.String({ default: "0.0.0.0", minLength: 1, description: "Address the gateway listens on" }),
  DATABASE_URL: T.Optional(
    T.String({ pattern: "^postgres(ql)?://", description: "PostgreSQL URL; unset means embedded PGlite" }),
  ),
  DB_CONNECT_TIMEOUT_SECONDS: Int(
    0,
    3600,
    60,
    "At start, how long an unreachable PostgreSQL is retried (with backoff) before the gateway gives up with a non-zero exit code",
  ),
  DATA_DIR: T.String({ default: "./data", minLength: 1, description: "PGlite data directory and local file storage" }),
  ADMIN_TOKEN: T.Optional(T.String({ minLength: 16, description: "Operator token for /v1/admin/*" })),
  JWT_SECRET: T.Optional(T.String({ minLength: 32, description: "HS256 secret for dashboard tokens" })),
  BYOK_ENCRYPTION_KEY: T.Optional(
    T.String({
      pattern: KEY_TEXT_PATTERN,
      description:
        "AES-256-GCM key sealing BYOK provider credentials at rest: 32 bytes as 64 hex digits or base64 (generated into DATA_DIR in demo mode; otherwise unset refuses new BYOK keys)",
    }),
  ),
  JWT_TTL_SECONDS: Int(60, 30 * 86400, 3600, "Lifetime of a dashboard access token"),
  REDIS_URL: T.Optional(
    T.String({ pattern: "^rediss?://", description: "Redis for rate limits shared across instances" }),
  ),
  RATE_LIMIT_RPM: Int(0, 1_000_000, 60, "Requests per API key in any 60-second span (sliding window; 0 = off)"),
  ACCOUNT_RATE_LIMIT_RPM: Int(
    0,
    1_000_000,
    600,
    "Requests per account (all its API keys together) in any 60-second span, on top of RATE_LIMIT_RPM per key (sliding window; 0 = off)",
  ),
  MAX_KEYS_PER_ACCOUNT: Int(
    0,
    1_000_000,
    100,
    "Live API keys per account (dashboard, provisioned child keys and operator-issued keys all count; the account's own creations past it get 403 key_limit_exceeded), and live management keys per account (0 = no cap)",
  ),
  ADMIN_FAILURES_PER_IP: Int(
    0,
    1_000_000,
    10,
    "Wrong admin tokens from one client address in any minute; past it that address's admin calls get 429 before the token is compared (0 = off)",
  ),
  METRICS_TOKEN: T.Optional(
    T.String({
      minLength: 16,
      description:
        "Bearer token GET /metrics requires (a Prometheus scraper's); unset: the ADMIN_TOKEN is accepted instead, and without either /metrics is 404",
    }),
  ),
  SIGNUP_RATE_PER_IP: Int(0, 1_000_000, 20, "Sign-ups from one client address in any hour (0 = off)"),
  LOGIN_RATE_PER_IP: Int(0, 1_000_000, 30, "Login attempts from one client address in any minute (0 = off)"),
  LOGIN_FAILURES_PER_EMAIL: Int(
    0,
    1_000_000,
    10,
    "Failed logins for one email in any hour; past it the email's logins get 429 (0 = off)",
  ),
  INVALID_KEY_RATE_PER_IP: Int(
    0,
    1_000_000,
    20,
    "Invalid API or management keys from one client address in any minute; past it that address's key lookups get 429 (0 = off)",
  ),
  BUN_CONFIG_MAX_HTTP_REQUESTS: Int(
    1,
    65535,
    4096,
    "Bun's limit on simultaneous outgoing fetches (past it Bun queues silently); the gateway applies it to itself at start",
  ),
  UPSTREAM_MAX_CONCURRENT: T.Optional(
    T.Integer({
      minimum: 0,
      maximum: 1_000_000,
      description:
        "Model calls in flight per process, the upstream connection budget shared fairly between accounts (default 3/4 of BUN_CONFIG_MAX_HTTP_REQUESTS: 3072 with the default 4096; at most that; 0 = no budget)",
    }),
  ),
  CONCURRENCY_PER_ACCOUNT: T.Optional(
    T.Integer({
      minimum: 0,
      maximum: 1_000_000,
      description: "Model calls in flight per account on one instance (default a quarter of the budget; 0 = off)",
    }),
  ),
  CONCURRENCY_PER_KEY: T.Optional(
    T.Integer({
      minimum: 0,
      maximum: 1_000_000,
      description: "Model calls in flight per API key on one instance (default an eighth of the budget; 0 = off)",
    }),
  ),
  UPSTREAM_QUEUE_TIMEOUT_MS: Int(
    0,
    600_000,
    10_000,
    "With the budget full, how long a call of an account under its fair share waits for a slot (then 503)",
  ),
  FX_USD_KRW: T.Number({
    exclusiveMinimum: 0,
    maximum: 100000,
    default: 1400,
    description: "USD→KRW rate for charges",
  }),
  EMBEDDINGS_MAX_VALUES: Int(
    1,
    2048 * 3072,
    2048 * 3072,
    "Most numbers one embeddings call may answer (inputs × dimensions; 400 above, before any hold). The default is OpenAI's own ceiling, 2,048 inputs of 3,072",
  ),
  MAX_BODY_BYTES: Int(1024, 1024 * 1024 * 1024, 50 * 1024 * 1024, "Request body limit (413 above)"),
  PUBLIC_MAX_BODY_BYTES: Int(
    1024,
    1024 * 1024,
    8192,
    "Body limit of the routes anyone may call without a credential (sign-up, login): a larger declared body is refused with 413 unread, a chunked one cut off past it",
  ),
  BODY_READ_TIMEOUT_MS: Int(
    100,
    3_600_000,
    60_000,
    "A request body still arriving this long after the caller was authenticated is refused with 408 and the connection closed (slow senders)",
  ),
  MAX_JSON_DEPTH: Int(
    8,
    1000,
    64,
    "Objects and arrays nested deeper than this in a JSON body are refused with 400 invalid_request",
  ),
  TRUSTED_PROXIES: T.String({
    default: "",
    description: "Comma-separated IPs/CIDRs whose X-Forwarded-For is believed",
  }),
  LOG_REQUESTS: Bool(
    "One JSON line per request on stdout (on/off; true/false and 1/0 accepted): route, status, duration, key and account ids, model, attempts, tokens, cost (docs/observability.md)",
    { default: true },
  ),
  OTEL_EXPORTER_OTLP_ENDPOINT: T.Optional(
    T.String({
      pattern: "^https?://",
      description:
        "OTLP/HTTP collector base URL: set, each request's trace is exported to <url>/v1/traces; unset, tracing is off and costs nothing",
    }),
  ),
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: T.Optional(
    T.String({
      pattern: "^https?://",
      description: "Full OTLP/HTTP traces URL (wins over OTEL_EXPORTER_OTLP_ENDPOINT; also turns tracing on)",
    }),
  ),
  OTEL_SERVICE_NAME: T.String({
    default: "model-gateway",
    minLength: 1,
    description: "service.name of the exported traces",
  }),
  LOG_LEVEL: T.Union(
    [T.Literal("debug"), T.Literal("info"), T.Literal("warn"), T.Literal("error"), T.Literal("silent")],
    { default: "info" },
  ),
  DEMO_MODE: T.Optional(Bool("Force demo mode on/off (default: on when DATABASE_URL is unset)")),
  UPSTREAM_FIRST_BYTE_TIMEOUT_MS: Int(100, 600_000, 60_000, "Deadline for an upstream's first byte"),
  UPSTREAM_IDLE_TIMEOUT_MS: Int(100, 600_000, 60_000, "Deadline between two upstream stream chunks"),
  RETRY_BASE_MS: Int(0, 10_000, 200, "Base of the jittered exponential backoff between upstream retries"),
  CIRCUIT_BREAKER: Bool(
    "Circuit breaking: a provider (or provider × model) failing past the threshold is skipped without a call until a cool-down and probe calls say it is back (off: every candidate is always tried)",
    { default: true },
  ),
  CIRCUIT_WINDOW_SECONDS: Int(1, 3600, 30, "Sliding window of upstream outcomes a circuit judges by"),
  CIRCUIT_MIN_CALLS: Int(1, 1_000_000, 10, "Outcomes the window needs before it may open a circuit"),
  CIRCUIT_MIN_ACCOUNTS: Int(
    1,
    1000,
    3,
    "Distinct failing accounts a circuit needs to open (fewer when fewer accounts called the provider in the window)",
  ),
  CIRCUIT_FAILURE_PERCENT: Int(
    1,
    100,
    50,
    "Share of failed outcomes (server errors, timeouts, rate limits) in the window that opens a circuit",
  ),
  CIRCUIT_COOLDOWN_MS: Int(
    100,
    3_600_000,
    15_000,
    "How long an open circuit refuses calls before probe calls may test it",
  ),
  CIRCUIT_PROBES: Int(
    1,
    100,
    3,
    "Probe calls let through at once after the cool-down; that many successes close the circuit, one failure opens it again",
  ),
  CIRCUIT_SLOW_CALL_MS: Int(
    0,
    600_000,
    0,
    "A successful upstream call slower than this to its first byte counts as failed (0 = latency never opens a circuit)",
  ),
  HEDGE_MIN_DELAY_MS: Int(
    0,
    600_000,
    100,
    "Hedged requests: the shortest wait for the first provider's first byte before the next provider is asked too",
  ),
  HEDGE_MAX_DELAY_MS: Int(
    1,
    600_000,
    2000,
    "Hedged requests: the longest such wait (and the wait while a provider has fewer than 10 first-byte samples)",
  ),
  HOLD_TTL_SECONDS: Int(
    30,
    86400,
    3600,
    "A chat hold not renewed for this long is released by the sweeper (a running call renews its hold every third of it)",
  ),
  STREAM_DRAIN_MS: Int(
    0,
    60_000,
    5000,
    "After a client hangs up on a stream, the upstream is still read this long for its usage, the bill's basis (0 = cut at once and bill an estimate)",
  ),
  SSE_KEEPALIVE_MS: Int(50, 120_000, 15_000, "A quiet stream gets a `: keepalive` comment after this long"),
  PROCESSES: T.String({
    pattern: "^([Aa][Uu][Tt][Oo]|[1-9][0-9]{0,2})$",
    default: "1",
    description:
      "Gateway processes on this host, on one port (`auto` = the cores); more than 1 needs DATABASE_URL and REDIS_URL",
  }),
  SHUTDOWN_DRAIN_MS: Int(
    1000,
    600_000,
    25_000,
    "After SIGTERM, the process exits within this long: open calls and streams run until its last fifth (at most 5 s), then end with their error event, settled or released",
  ),
  RESPONSE_CACHE_TTL_SECONDS: Int(1, 30 * 86400, 3600, "Lifetime of a response-cache entry"),
  SEMANTIC_CACHE_THRESHOLD: T.Number({
    minimum: 0,
    maximum: 1,
    default: 0.95,
    description: "Cosine similarity for a semantic cache hit",
  }),
  STATS_MIN_DISTINCT_ACCOUNTS: T.Optional(
    T.Integer({
      minimum: 1,
      maximum: 1000,
      description:
        "Privacy threshold of the public stats: distinct accounts a model or app needs to be named (default 3, 1 in demo mode)",
    }),
  ),
  STATS_MIN_DISTINCT_KEYS: T.Optional(
    T.Integer({
      minimum: 1,
      maximum: 1000,
      description:
        "Deprecated old name of STATS_MIN_DISTINCT_ACCOUNTS (read only when that one is unset; it now counts accounts too)",
    }),
  ),
  STATS_MIN_ACCOUNT_AGE_HOURS: T.Optional(
    T.Integer({
      minimum: 0,
      maximum: 8760,
      description:
        "Hours an account must exist before its calls count towards naming a model or app in the public stats (default 168, 0 in demo mode)",
    }),
  ),
  STATS_NOISE: T.Optional(
    T.Union([T.Literal("on"), T.Literal("off")], {
      description:
        "Keyed noise on every published figure of the public stats when the privacy threshold is above 1 (default on)",
    }),
  ),
  STATS_ROLLUP_INTERVAL_MS: T.Optional(
    T.Integer({
      minimum: 0,
      maximum: 60_000,
      description:
        "Pause between stats rollup runs (default 5000, 1000 in demo mode; 0 = no rollup job on this instance)",
    }),
  ),
  CATALOG_PATH: T.Optional(T.String({ minLength: 1, description: "Alternative catalog file" })),
  CATALOG_TODAY: T.Optional(
    T.String({
      pattern: "^[0-9]{4}-[0-9]{2}-[0-9]{2}$",
      description:
        "The day (YYYY-MM-DD) the catalog's deprecation and retirement dates are compared with (default: today in UTC; for tests and demos)",
    }),
  ),
  SIMULATOR: T.Optional(
    Bool(
      "on: the built-in simulator stands in for every provider without a credential (staging, load tests; a warning at every start). Default: on in demo mode, off otherwise (an unconfigured provider is then unavailable)",
    ),
  ),
  CATALOG_HASH_PATH: T.Optional(
    T.String({
      minLength: 1,
      description: "Hash file of the catalog (sha256sum format; default: CATALOG_PATH with .json replaced by .sha256)",
    }),
  ),
  SIM_PORT: Int(
    0,
    65535,
    0,
    "Port of the in-process upstream simulator (0 = any free port; the standalone `npm run sim` then uses 8090)",
  ),
  SIM_HOST: T.String({
    default: "127.0.0.1",
    minLength: 1,
    description: "Address the standalone simulator (`npm run sim`) listens on",
  }),
  WEB_SEARCH_PRICE_KRW: T.Number({
    minimum: 0,
    maximum: 100000,
    default: 7,
    description: "Price of one web-plugin search (Brave Search), charged with the call",
  }),
  WEB_SEARCH_TIMEOUT_MS: Int(100, 60_000, 5000, "Deadline of one web-plugin search"),
  RESPONSES_STORE: Bool(
    "Keep Responses-API answers (and their input) so previous_response_id, item_reference and GET/DELETE /v1/responses/{id} work; off: both are ignored or refused, nothing is kept",
    { default: false },
  ),
  RESPONSES_STORE_DAYS: Int(1, 3650, 30, "How long a stored response is kept (RESPONSES_STORE=on)"),
  COUNT_TOKENS_RPM_PER_KEY: Int(
    0,
    1_000_000,
    60,
    "POST /v1/messages/count_tokens per API key per minute (0 = unlimited); past it 429 with Retry-After",
  ),
  COUNT_TOKENS_RPM_PER_ACCOUNT: Int(
    0,
    1_000_000,
    300,
    "POST /v1/messages/count_tokens per account per minute, all its keys together (0 = unlimited)",
  ),
  RESPONSES_STORE_MAX_RESPONSE_KB: Int(
    1,
    1_048_576,
    4096,
    "Largest stored response (its JSON and its input items') in KiB; a larger one is answered but not kept",
  ),
  RESPONSES_STORE_ACCOUNT_MB: Int(
    1,
    1_048_576,
    256,
    "Live stored bytes per account in MiB (responses plus their distinct inputs); past it answers are not kept",
  ),
  VIDEO_STORAGE: T.Union([T.Literal("local"), T.Literal("s3")], {
    default: "local",
    description: "Where Family G video results are kept: a local directory or S3-compatible storage",
  }),
  VIDEO_STORAGE_DIR: T.Optional(
    T.String({ minLength: 1, description: "Local storage directory (default <DATA_DIR>/files)" }),
  ),
  S3_BUCKET: T.Optional(
    T.String({ minLength: 1, description: "S3 bucket for VIDEO_STORAGE=s3 (else Bun's S3_*/AWS_* environment)" }),
  ),
  S3_ENDPOINT: T.Optional(
    T.String({ pattern: "^https?://", description: "S3-compatible endpoint URL (R2, MinIO, ...)" }),
  ),
  S3_REGION: T.Optional(T.String({ minLength: 1, description: "S3 region" })),
  S3_ACCESS_KEY_ID: T.Optional(T.String({ minLength: 1, description: "S3 access key id" })),
  S3_SECRET_ACCESS_KEY: T.Optional(T.String({ minLength: 1, description: "S3 secret access key" })),
  VIDEO_RETENTION_HOURS: T.Number({
    exclusiveMinimum: 0,
    maximum: 8760,
    default: 48,
    description: "Family G results are deleted (410) after this many hours",
  }),
  VIDEO_POLL_WORKERS: Int(
    0,
    64,
    2,
    "Video poller concurrency: Bun workers on PostgreSQL, inline slots on PGlite (0 = this instance does not poll)",
  ),
  VIDEO_POLL_INITIAL_MS: Int(10, 600_000, 2000, "First video poll delay; later polls back off ×1.5"),
  VIDEO_POLL_MAX_MS: Int(10, 3_600_000, 30_000, "Longest delay between two polls of one video job"),
  VIDEO_CLAIM_MS: T.Optional(
    T.Integer({
      minimum: 100,
      maximum: 3_600_000,
      description: "How long a poller's claim on a job lasts (a crashed poller's jobs return after it); default 60000",
    }),
  ),
  VIDEO_LEASE_MS: T.Optional(
    T.Integer({
      minimum: 100,
      maximum: 3_600_000,
      description: "Deprecated old name of VIDEO_CLAIM_MS (read only when that one is unset)",
    }),
  ),
  VIDEO_JOB_TIMEOUT_SECONDS: Int(
    10,
    7 * 86400,
    7200,
    "A video job not finished after this fails and its hold is released",
  ),
  VIDEO_SWEEP_INTERVAL_MS: Int(
    100,
    3_600_000,
    60_000,
    "How often expired video files and old Idempotency-Key records are cleaned up",
  ),
  VIDEO_URL_PRIVATE_HOSTS_ALLOWED: Bool(
    "Accept video reference URLs whose host is or resolves to a private, loopback or link-local address (default: refused with 422)",
    { default: false },
  ),
  DB_QUERY_TIMEOUT_MS: Int(
    0,
    600_000,
    5000,
    "A database query of the request path not answered after this fails the request with 503 (0 = wait forever)",
  ),
  LEDGER_COMMIT: T.Union([T.Literal("durable"), T.Literal("async")], {
    default: "durable",
    description:
      "Ledger commits: durable (a PostgreSQL crash loses nothing) or async (faster; a PostgreSQL crash may lose the last ~600 ms of charges)",
  }),
  LEDGER_SETTLE: T.Union([T.Literal("before_answer"), T.Literal("behind_answer")], {
    default: "before_answer",
    description:
      "When an answered call's settle lands: before_answer (the answer's last bytes wait for it, so a killed process has charged every call it answered) or behind_answer (lower latency; a crash may leave the last answered calls uncharged)",
  }),
  LEDGER_LEASES: Bool(
    "Credit leases for busy keys on PostgreSQL: on (a busy key's calls are held in memory against one database hold; their charges land in batches, before the answers with LEDGER_SETTLE=before_answer) or off (every call holds in the database)",
    { default: true },
  ),
  // The console's sessions and credits (./schema-console.ts), usage retention (./schema-data.ts).
  ...CONSOLE_SETTINGS,
  ...DATA_SETTINGS,
  CORS_ORIGINS: T.String({
    default: "",
    description: "Comma-separated origins allowed to call the API from a browser (`*` for any); empty = CORS off",
  }),
});

export type Env = Static<typeof EnvSchema>;
