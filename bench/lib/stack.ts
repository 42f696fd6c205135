/**
 * The system under test, on loopback: the upstream simulator, the gateway on a fresh
 * PostgreSQL database (every provider pointed at the simulator), the bare proxy, and a funded
 * user with an API key made through the public account and admin API.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import postgres from "postgres";
import { collectorOff, gcProbe } from "./heap-probe";
import { freePort, spawnChild, waitReady, type Child } from "./procs";

const ROOT = join(import.meta.dir, "..", "..");
/**
 * The tree whose gateway is measured: this one, or BENCH_GATEWAY_ROOT (another checkout of the
 * project, e.g. the commit before a change), so a before/after pair runs under one harness.
 */
const GATEWAY_ROOT = process.env.BENCH_GATEWAY_ROOT ?? ROOT;
/** The stack gateway's operator token (also what /metrics takes: no METRICS_TOKEN is set). */
export const ADMIN_TOKEN = "bench-admin-token-0123456789abcdef";

export interface StackOptions {
  /** postgres://… of a server where a database may be created (default 127.0.0.1:5432). */
  serverUrl: string;
  /** Core for the gateway and the bare proxy; the simulator gets `loadCore`. */
  targetCore: number | null;
  loadCore: number | null;
  /** Extra flags for the gateway's bun (e.g. --cpu-prof-md). */
  gatewayBunFlags: string[];
  /** Extra environment for the gateway. */
  gatewayEnv: Record<string, string>;
  /** Funded accounts (each with one key) to create; the first is the main one. */
  accounts?: number;
  /** Export traces to an OTLP sink started beside the simulator. */
  otel?: boolean;
  /**
   * Run the gateway and the bare proxy with JavaScriptCore's GC log on (BUN_JSC_logGC), their
   * stderr to `gatewayGcLog` and `proxyGcLog`.
   */
  gcLog?: boolean;
  /**
   * Run the gateway and the bare proxy with the collector off and the heap probe loaded
   * (lib/heap-probe.ts): what each call allocates, read from `heapProbes`. Their memory only grows.
   */
  collectorOff?: boolean;
  /**
   * More gateways of the same tree on the same database, each with the environment of the first
   * plus its own (e.g. PROCESSES=2, LEDGER_SETTLE=behind_answer), started after the first has
   * migrated it: two configurations measured in one run against the same accounts and keys.
   * `root`: the checkout it runs from (another commit's tree; default: the first's).
   */
  extraGateways?: { name: string; env: Record<string, string>; root?: string }[];
}

export interface Stack {
  simUrl: string;
  gatewayUrl: string;
  proxyUrl: string;
  sim: Child;
  gateway: Child;
  proxy: Child;
  token: string;
  userId: string;
  /** One key per funded account (tokens[0] === token). */
  tokens: string[];
  dbName: string;
  /** postgres://… of that throwaway database, on `serverUrl`'s server. */
  dbUrl: string;
  /** The gateway's stdout: its JSON lines, one per request with LOG_REQUESTS on. */
  gatewayLog: string;
  /** The OTLP sink's URL with `otel`. */
  otelUrl: string | null;
  /** The gateway's stderr with `gcLog`: one line per garbage collection (see gc-log.ts). */
  gatewayGcLog: string | null;
  proxyGcLog: string | null;
  /**
   * The heap probes' files (lib/heap-probe.ts): with `collectorOff`, readings of a heap that is
   * never collected; otherwise each reading collects first (gcProbe), for the RSS kept.
   */
  heapProbes: { gateway: string; proxy: string };
  /** The `extraGateways`, by name. */
  extra: Record<string, { url: string; child: Child }>;
  stop(): Promise<void>;
}

/** Probes the server; throws a message that says what to do. */
export async function checkPostgres(serverUrl: string): Promise<void> {
  const sql = postgres(serverUrl, { max: 1, connect_timeout: 3, onnotice: () => {} });
  try {
    await sql`select 1`;
  } catch (e) {
    throw new Error(
      `PostgreSQL is not reachable at ${serverUrl} (${e instanceof Error ? e.message : e}). Start it, or pass --pg=postgres://user@host:port/db`,
    );
  } finally {
    await sql.end({ timeout: 1 });
  }
}

export async function startStack(o: StackOptions): Promise<Stack> {
  const dbName = `gw_bench_${Date.now().toString(36)}`;
  const admin = postgres(o.serverUrl, { max: 1, onnotice: () => {} });
  await admin.unsafe(`create database ${dbName}`);
  await admin.end();
  const dbUrl = o.serverUrl.replace(/\/[^/]*$/, `/${dbName}`);
  const dataDir = mkdtempSync(join(tmpdir(), "gw-bench-"));
  const bun = process.execPath;
  const children: Child[] = [];
  const baseEnv = {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: process.env.HOME ?? "/root",
    BUN_CONFIG_MAX_HTTP_REQUESTS: "4096",
  };

  const stopAll = async () => {
    for (const c of children.reverse()) await c.stop().catch(() => {});
    rmSync(dataDir, { recursive: true, force: true });
    const a = postgres(o.serverUrl, { max: 1, onnotice: () => {} });
    await a.unsafe(`drop database if exists ${dbName} with (force)`).catch(() => {});
    await a.end();
  };

  try {
    const simPort = await freePort();
    const sim = spawnChild(
      "simulator",
      [bun, join(ROOT, "src/sim/main.ts")],
      { ...baseEnv, SIM_PORT: String(simPort), SIM_HOST: "127.0.0.1" },
      o.loadCore,
    );
    children.push(sim);
    const simUrl = `http://127.0.0.1:${simPort}`;
    await waitReady(sim, `${simUrl}/sim/stats`);

    // Every provider of the catalog configured (a credential and a base URL) at the simulator, as
    // a production deployment configures real ones: the gateway starts no simulator of its own.
    const catalog = JSON.parse(readFileSync(join(ROOT, "src/core/catalog/catalog.json"), "utf8")) as {
      providers: { id: string; base_url_env: string; credential_env: string }[];
    };
    const providerEnv: Record<string, string> = {};
    for (const p of catalog.providers) {
      providerEnv[p.base_url_env] = `${simUrl}/sim/${p.id}`;
      providerEnv[p.credential_env] = "simulated";
    }
    // The web plugin's search engine is not in the catalog but is simulated too.
    providerEnv.BRAVE_BASE_URL = `${simUrl}/sim/brave`;
    providerEnv.BRAVE_API_KEY = "simulated";

    let otelUrl: string | null = null;
    if (o.otel) {
      const sinkPort = await freePort();
      const sink = spawnChild(
        "otlp sink",
        [bun, join(ROOT, "bench/otlp-sink.ts")],
        { ...baseEnv, SINK_PORT: String(sinkPort) },
        o.loadCore,
      );
      children.push(sink);
      otelUrl = `http://127.0.0.1:${sinkPort}`;
      await waitReady(sink, otelUrl);
    }

    const gwPort = await freePort();
    const gatewayLog = join(dataDir, "gateway.log");
    const gatewayGcLog = o.gcLog ? join(dataDir, "gateway-gc.log") : null;
    const gatewayEnv = (port: number, dir: string): Record<string, string> => ({
      ...baseEnv,
      ...providerEnv,
      DATABASE_URL: dbUrl,
      // The gateway's defaults (durable commits, credit leases, settles before the answer)
      // unless the run asks for LEDGER_COMMIT=async, LEDGER_LEASES=off or
      // LEDGER_SETTLE=behind_answer.
      ...(process.env.LEDGER_COMMIT && { LEDGER_COMMIT: process.env.LEDGER_COMMIT }),
      ...(process.env.LEDGER_LEASES && { LEDGER_LEASES: process.env.LEDGER_LEASES }),
      ...(process.env.LEDGER_SETTLE && { LEDGER_SETTLE: process.env.LEDGER_SETTLE }),
      DATA_DIR: dir,
      PORT: String(port),
      HOST: "127.0.0.1",
      ADMIN_TOKEN,
      JWT_SECRET: "bench-jwt-secret-0123456789abcdef0123456789",
      DEMO_MODE: "false",
      // On, with a limit no run reaches: the limiter is exercised on every request.
      RATE_LIMIT_RPM: "1000000",
      ACCOUNT_RATE_LIMIT_RPM: "1000000",
      // One account drives the whole load: its concurrency is what is measured, not limited;
      // and the runner signs its accounts up from one address.
      CONCURRENCY_PER_ACCOUNT: "0",
      CONCURRENCY_PER_KEY: "0",
      SIGNUP_RATE_PER_IP: "0",
      LOGIN_RATE_PER_IP: "0",
      // The defaults of a deployment: info level, one JSON line per request (to a file, as a
      // log shipper would take it); LOG_REQUESTS=off or LOG_LEVEL=warn measure without them.
      LOG_LEVEL: process.env.LOG_LEVEL ?? "info",
      ...(process.env.LOG_REQUESTS && { LOG_REQUESTS: process.env.LOG_REQUESTS }),
      ...(otelUrl && { OTEL_EXPORTER_OTLP_ENDPOINT: otelUrl }),
      ...o.gatewayEnv,
    });
    const heapProbes = { gateway: join(dataDir, "gateway-heap.txt"), proxy: join(dataDir, "proxy-heap.txt") };
    const probe = o.collectorOff ? collectorOff : gcProbe;
    const gwOff = probe(heapProbes.gateway);
    const gateway = spawnChild(
      "gateway",
      [bun, ...o.gatewayBunFlags, ...gwOff.flags, join(GATEWAY_ROOT, "src/main.ts")],
      { ...gatewayEnv(gwPort, dataDir), ...(gatewayGcLog && { BUN_JSC_logGC: "1" }), ...gwOff.env },
      o.targetCore,
      gatewayLog,
      gatewayGcLog ?? undefined,
    );
    children.push(gateway);
    const gatewayUrl = `http://127.0.0.1:${gwPort}`;
    await waitReady(gateway, `${gatewayUrl}/healthz`, 60_000);

    const extra: Stack["extra"] = {};
    for (const g of o.extraGateways ?? []) {
      const port = await freePort();
      const dir = join(dataDir, g.name);
      mkdirSync(dir);
      const child = spawnChild(
        g.name,
        [bun, ...o.gatewayBunFlags, join(g.root ?? GATEWAY_ROOT, "src/main.ts")],
        { ...gatewayEnv(port, dir), ...g.env },
        o.targetCore,
        join(dir, "gateway.log"),
      );
      children.push(child);
      extra[g.name] = { url: `http://127.0.0.1:${port}`, child };
      await waitReady(child, `${extra[g.name]!.url}/healthz`, 60_000);
    }

    const proxyPort = await freePort();
    const proxyGcLog = o.gcLog ? join(dataDir, "proxy-gc.log") : null;
    const proxyOff = probe(heapProbes.proxy);
    const proxy = spawnChild(
      "bare proxy",
      [bun, ...proxyOff.flags, join(ROOT, "bench/proxy.ts")],
      {
        ...baseEnv,
        PROXY_PORT: String(proxyPort),
        UPSTREAM: `${simUrl}/sim`,
        ...(proxyGcLog && { BUN_JSC_logGC: "1" }),
        ...proxyOff.env,
      },
      o.targetCore,
      undefined,
      proxyGcLog ?? undefined,
    );
    children.push(proxy);
    const proxyUrl = `http://127.0.0.1:${proxyPort}`;
    await waitReady(proxy, `${proxyUrl}/health`);

    const accounts = [];
    for (let i = 0; i < Math.max(1, o.accounts ?? 1); i++) accounts.push(await fundedKey(gatewayUrl));
    const { token, userId } = accounts[0]!;
    return {
      simUrl,
      gatewayUrl,
      proxyUrl,
      sim,
      gateway,
      proxy,
      token,
      userId,
      tokens: accounts.map((a) => a.token),
      dbName,
      dbUrl,
      gatewayLog,
      otelUrl,
      gatewayGcLog,
      proxyGcLog,
      heapProbes,
      extra,
      stop: stopAll,
    };
  } catch (e) {
    await stopAll();
    throw e;
  }
}

async function call(base: string, method: string, path: string, token: string | null, body?: unknown): Promise<any> {
  const res = await fetch(base + path, {
    method,
    headers: { "content-type": "application/json", ...(token && { authorization: `Bearer ${token}` }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${text}`);
  return text ? JSON.parse(text) : null;
}

/** A new account with plenty of credit and a standard key, through the public API. */
async function fundedKey(base: string): Promise<{ token: string; userId: string }> {
  const email = `bench-${crypto.randomUUID().slice(0, 8)}@bench.example`;
  const password = "benchmark password 1";
  const s = await call(base, "POST", "/v1/auth/signup", null, { email, password });
  const l = await call(base, "POST", "/v1/auth/login", null, { email, password });
  await call(base, "POST", `/v1/admin/users/${s.user_id}/topups`, ADMIN_TOKEN, { amount_krw: 10_000_000_000 });
  const k = await call(base, "POST", "/v1/keys", l.access_token, { name: "bench" });
  return { token: k.key, userId: s.user_id };
}
