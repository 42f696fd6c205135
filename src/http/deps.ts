/** Everything the HTTP layer needs, built once by the composition root (src/boot/http.ts). */
import type { Config } from "../config";
import type { Database } from "../db/client";
import type { InvalidationBus } from "../db/invalidation";
import type { KeyRepo } from "../db/repos/keys";
import type { SettingsStore } from "../db/repos/settings";
import type { UserRepo } from "../db/repos/users";
import type { SessionRepo } from "../db/repos/sessions";
import type { SecretBox } from "../lib/secret-box";
import type { Authenticator } from "./auth";
import type { AuthThrottle } from "./auth-throttle";
import type { CallSlots } from "./call-slots";
import type { GatewayMetrics } from "./metrics";
import type { RequestTracer } from "./request-log";

export interface AppDeps {
  config: Config;
  db: Database;
  auth: Authenticator;
  /** Sign-up and login throttles (per client address, per email). */
  throttle: AuthThrottle;
  /** Concurrency limits of model calls (per key, per account, the process budget). */
  calls: CallSlots;
  keys: KeyRepo;
  users: UserRepo;
  /** Console sessions (refresh-token families behind the refresh cookie). */
  sessions: SessionRepo;
  settings: SettingsStore;
  bus: InvalidationBus;
  metrics: GatewayMetrics;
  jwtSecret: string;
  adminToken: string | null;
  /** Seals BYOK provider credentials (BYOK_ENCRYPTION_KEY); null when none is configured. */
  byok: SecretBox | null;
  /** Ids of the chat providers a BYOK key may name (from the catalog). */
  chatProviderIds: () => string[];
  /** Exports each request's trace (OTEL_EXPORTER_OTLP_ENDPOINT); absent or null when off. */
  tracer?: RequestTracer | null;
  /** True once the process is stopping (src/boot/shutdown.ts): every new request is answered 503. */
  draining?: () => boolean;
  /** This process's index among the host's gateway processes (src/boot/processes.ts); unset for a lone one. */
  processIndex?: number;
  /** `/metrics` for the whole host (src/boot/host-metrics.ts); unset: this process's own. */
  hostMetrics?: () => Promise<string>;
}
