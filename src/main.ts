/**
 * The composition root: configuration → gateway → listen; the clean shutdown on SIGTERM and
 * SIGINT is src/boot/shutdown.ts.
 */
// First of all: Bun reads its fetch limit only at process start (see src/boot/fetch-limit.ts).
import "./boot/fetch-limit-apply";
// Then, before Elysia loads: it reads its production mode once (src/boot/production-mode.ts).
import "./boot/production-mode";
import { ConfigError, loadConfig } from "./config";
import { buildGateway } from "./gateway";
import { demoBanner, seedDemo } from "./demo";
import { log, setLogLevel } from "./lib/log";
import { runCli } from "./cli";
import { waitForPostgres } from "./db/wait";
import { onStopSignals } from "./boot/shutdown";
import { processCount, processesFlag, processesRefusal, processIndex, supervise } from "./boot/processes";
import { processMetrics } from "./boot/host-metrics";

process.on("unhandledRejection", (e) => log.error("unhandled rejection", { error: e }));

const cliExit = runCli(process.argv.slice(2));
if (cliExit !== undefined) process.exit(cliExit);

let cfg;
try {
  cfg = loadConfig();
} catch (e) {
  if (e instanceof ConfigError) {
    console.error(e.message);
    process.exit(2);
  }
  throw e;
}
setLogLevel(cfg.LOG_LEVEL);

// Several processes on this host (--processes / PROCESSES): refused when they could not be
// correct, else this process supervises them (src/boot/processes.ts).
const index = processIndex();
const processes = index === undefined ? processCount(processesFlag(process.argv.slice(2)) ?? cfg.PROCESSES)! : 1;
const refusal = processesRefusal(processes, cfg);
if (refusal) {
  console.error(refusal);
  process.exit(2);
}

// A database that comes up after the gateway (compose, orchestrators) is waited for.
if (cfg.DATABASE_URL && !(await waitForPostgres(cfg.DATABASE_URL, { timeoutSeconds: cfg.DB_CONNECT_TIMEOUT_SECONDS })))
  process.exit(1);
if (processes > 1) process.exit(await supervise(processes, cfg));

// A configuration problem found at start (a BYOK_ENCRYPTION_KEY that cannot open the stored
// credentials) stops the process like a bad variable, with the reason and no stack; any other
// start failure is one sentence too (the stack with LOG_LEVEL=debug).
const gw = await buildGateway(cfg).catch((e) => {
  if (e instanceof ConfigError) {
    console.error(e.message);
    process.exit(2);
  }
  console.error(
    `The gateway could not start: ${String((e as Error)?.message ?? e)
      .split("\n")[0]!
      .replace(/\.$/, "")}.`,
  );
  if (cfg.LOG_LEVEL === "debug") console.error((e as Error)?.stack);
  process.exit(1);
});
// One of the host's processes shares the port with the others (the kernel spreads connections).
try {
  gw.app.listen({ port: cfg.PORT, hostname: cfg.HOST, reusePort: index !== undefined });
} catch (e) {
  // Another process has the port: one sentence and a non-zero exit, not a stack trace.
  if ((e as { code?: string })?.code !== "EADDRINUSE") throw e;
  console.error(`The gateway could not start: port ${cfg.PORT} on ${cfg.HOST} is already in use (set PORT or HOST).`);
  await Promise.race([gw.stop().catch(() => {}), Bun.sleep(5_000)]);
  process.exit(1);
}
if (index !== undefined) {
  gw.deps.processIndex = index;
  const host = processMetrics(async () => {
    await gw.deps.metrics.registry.refresh();
    return gw.deps.metrics.registry.render();
  });
  if (host) gw.deps.hostMetrics = () => host.hostText();
  // A supervisor killed outright leaves no process behind: its gateways stop cleanly.
  const parent = process.ppid;
  setInterval(() => process.ppid !== parent && process.kill(process.pid, "SIGTERM"), 1000).unref();
}
const server = gw.app.server!;
const host = cfg.HOST === "0.0.0.0" || cfg.HOST === "::" ? "localhost" : cfg.HOST;
const base = `http://${host}:${server.port}`;
log.info("gateway listening", {
  url: base,
  database: gw.deps.db.kind,
  demo: cfg.demoMode,
  simulated: gw.upstreams.simulated(),
  // The operator sees the limits in force, derived ones included (see README, "Concurrency").
  calls: {
    budget: cfg.UPSTREAM_MAX_CONCURRENT,
    per_account: cfg.CONCURRENCY_PER_ACCOUNT,
    per_key: cfg.CONCURRENCY_PER_KEY,
  },
});
if (cfg.demoMode) {
  const seed = await seedDemo(gw);
  // Plain text for the person at the terminal, on stderr: stdout carries JSON lines only.
  process.stderr.write(demoBanner(base, seed, gw.deps.adminToken, gw.upstreams.simulated()));
}

// SIGTERM / SIGINT: stop taking work, let open calls finish, end the rest with their error
// event, settle or release every call, exit within SHUTDOWN_DRAIN_MS (src/boot/shutdown.ts).
onStopSignals(server, gw, cfg.SHUTDOWN_DRAIN_MS);
