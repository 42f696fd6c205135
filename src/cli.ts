/**
 * Command-line flags of the gateway (the binary and `bun src/main.ts`): `--help`, `--version`
 * and `--check-config`, none of which opens the database or listens, and `--processes N`, which
 * starts N gateway processes (src/boot/processes.ts). Without a flag the gateway starts; an
 * unknown flag is refused, so a typo never starts a server.
 */
import pkg from "../package.json" with { type: "json" };
import { ConfigError, loadConfig, type Config } from "./config";
import { EnvSchema } from "./config/schema";
import { describeTarget } from "./db/wait";
import { CatalogStore } from "./config/catalog-store";
import { formatProblem } from "./core/catalog/types";
import { processCount, processesFlag, processesRefusal } from "./boot/processes";

/** Set at build time by .ci/build.sh (`--define`); absent when running from source. */
declare const GATEWAY_COMMIT: string | undefined;

function versionLine(): string {
  let commit = typeof GATEWAY_COMMIT === "string" ? GATEWAY_COMMIT : "";
  if (!commit) {
    // From source: the checkout's commit, when git is at hand.
    try {
      const r = Bun.spawnSync(["git", "rev-parse", "--short", "HEAD"], {
        cwd: import.meta.dir,
        stdout: "pipe",
        stderr: "ignore",
      });
      if (r.success) commit = r.stdout.toString().trim();
    } catch {} // no git, or no such directory (a binary built without the commit)
  }
  return `${pkg.name} ${pkg.version}${commit ? ` (commit ${commit})` : ""}`;
}

const MAIN_VARS = [
  "PORT",
  "HOST",
  "DATABASE_URL",
  "DB_CONNECT_TIMEOUT_SECONDS",
  "DATA_DIR",
  "DEMO_MODE",
  "ADMIN_TOKEN",
  "JWT_SECRET",
  "BYOK_ENCRYPTION_KEY",
  "REDIS_URL",
  "PROCESSES",
  "LOG_LEVEL",
] as const;

export function usage(): string {
  const props = EnvSchema.properties as Record<string, { description?: string; default?: unknown }>;
  const rows = MAIN_VARS.map((name) => {
    const s = props[name]!;
    const desc = s.description ?? (name === "LOG_LEVEL" ? "debug, info, warn, error or silent" : "");
    return `  ${name.padEnd(28)} ${desc}${s.default !== undefined && s.default !== "" ? ` (default ${s.default})` : ""}`;
  });
  return [
    `${versionLine()}: an OpenAI-compatible model gateway with KRW prepaid billing.`,
    "",
    "Usage: gateway [--help | --version | --check-config | --processes N]",
    "",
    "  (no option)      start the gateway (configured by the environment)",
    "  --processes N    start N gateway processes on one port (auto = the cores; overrides PROCESSES)",
    "  --check-config   validate the environment as the start would, print the result, exit 0 or 1",
    "  --version        print the version and the commit it was built from",
    "  --help           print this text",
    "",
    "Main environment variables (every one is optional; none set = demo mode):",
    ...rows,
    `  ${"<PROVIDER>_API_KEY".padEnd(28)} a provider's credential (OPENAI_API_KEY, ...); unset = calls to it are refused (503), except in demo mode or with SIMULATOR=on, where the built-in simulator answers`,
    `  ${"<PROVIDER>_BASE_URL".padEnd(28)} a provider's base URL`,
    "",
    "Every variable, its default and its meaning: README.md, section Configuration, and .env.example.",
    "",
  ].join("\n");
}

/**
 * What happens to a provider without a credential: the simulator answers only in demo mode or
 * with SIMULATOR=on; otherwise its calls are refused (provider_not_configured), never simulated.
 */
function unkeyed(cfg: Config, someKeyed: boolean): string {
  const which = someKeyed ? "every other provider" : "every provider";
  if (cfg.simulator)
    return `${which} is served by the built-in simulator (${cfg.demoMode ? "demo mode" : "SIMULATOR=on: never in production"})`;
  return `calls to ${which} are refused (503 provider_not_configured) unless a BYOK key brings its credential`;
}

/** The short summary `--check-config` prints after "configuration OK". */
export function summary(cfg: Config): string[] {
  const keyed = Object.keys(cfg.providerKeys).sort();
  const rerouted = Object.keys(cfg.providerBaseUrls)
    .filter((p) => !cfg.providerKeys[p])
    .sort();
  const catalog = new CatalogStore({
    env: { CATALOG_PATH: cfg.CATALOG_PATH, CATALOG_HASH_PATH: cfg.CATALOG_HASH_PATH },
  });
  const snap = catalog.peek();
  return [
    `  mode: ${cfg.demoMode ? "demo (seeded demo account, generated secrets)" : "production"}`,
    `  listen: ${cfg.HOST}:${cfg.PORT}`,
    `  database: ${cfg.DATABASE_URL ? `PostgreSQL at ${describeTarget(cfg.DATABASE_URL)} (retried for ${cfg.DB_CONNECT_TIMEOUT_SECONDS} s at start)` : `embedded PGlite in ${cfg.DATA_DIR}`}`,
    `  rate limits: ${cfg.REDIS_URL ? `shared through Redis at ${describeTarget(cfg.REDIS_URL)}` : "in this process"}`,
    `  processes: ${processCount(cfg.PROCESSES)} (PROCESSES=${cfg.PROCESSES})`,
    `  admin API: ${cfg.ADMIN_TOKEN ? "on (ADMIN_TOKEN set)" : cfg.demoMode ? "on (token generated in demo mode)" : "off (ADMIN_TOKEN unset: 404)"}`,
    `  providers with a credential: ${keyed.length ? keyed.join(", ") : "none"}${rerouted.length ? `; base URL only: ${rerouted.join(", ")}` : ""}; ${unkeyed(cfg, keyed.length > 0)}`,
    `  upstream calls in flight: at most ${cfg.UPSTREAM_MAX_CONCURRENT || "unlimited"} (Bun fetch limit ${cfg.BUN_CONFIG_MAX_HTTP_REQUESTS})`,
    snap
      ? `  catalog: verified (${catalog.path.startsWith("/$bunfs/") ? "shipped" : catalog.path})`
      : `  catalog: FAILED verification, model endpoints would answer 503: ${catalog.lastErrors().map(formatProblem).join("; ")}`,
  ];
}

/**
 * Handles the flags in `args`. Returns the exit code when a flag was handled (the process
 * should exit with it), or undefined when the gateway should start.
 */
export function runCli(
  args: readonly string[],
  env: Record<string, string | undefined> = process.env,
  out = (s: string) => process.stdout.write(s),
  err = (s: string) => process.stderr.write(s),
): number | undefined {
  if (args.length === 0) return undefined;
  const flag = args[0]!;
  const processes = processesFlag(args);
  if (processes !== undefined) {
    if (args.length > (flag === "--processes" ? 2 : 1)) {
      err(`--processes takes one value; see --help.\n`);
      return 2;
    }
    if (processCount(processes) === null) {
      err(`--processes: expected a count from 1 to 999 or "auto", got "${processes}".\n`);
      return 2;
    }
    return undefined;
  }
  if (args.length > 1) {
    err(`gateway takes at most one option, got ${args.length}; see --help.\n`);
    return 2;
  }
  switch (flag) {
    case "--help":
    case "-h":
      out(usage());
      return 0;
    case "--version":
    case "-v":
      out(versionLine() + "\n");
      return 0;
    case "--check-config":
      try {
        const cfg = loadConfig(env);
        // Several processes the start would refuse (src/boot/processes.ts) are a problem here too.
        const refusal = processesRefusal(processCount(cfg.PROCESSES) ?? 1, cfg);
        if (refusal) {
          err(`${refusal}\n`);
          return 1;
        }
        out(["configuration OK", ...summary(cfg), ""].join("\n"));
        return 0;
      } catch (e) {
        if (!(e instanceof ConfigError)) throw e;
        err(e.problems.map((p) => `${p}\n`).join(""));
        return 1;
      }
    default:
      err(`unknown option "${flag}"; see --help.\n`);
      return 2;
  }
}
