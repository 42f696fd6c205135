/**
 * The peers measured beside the gateway in the same run: the essentials proxy
 * (bench/essentials-proxy.ts) and, when installed outside the repository, Portkey's open-source
 * gateway on Bun. Portkey is never a dependency of this project: install it on demand, e.g.
 *   npm install --prefix /tmp/portkey @portkey-ai/gateway@1.15.2
 * and pass `--portkey=/tmp/portkey` (or BENCH_PORTKEY_DIR). Without it the run says so and
 * measures the other targets.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { collectorOff, gcProbe } from "./heap-probe";
import { freePort, spawnChild, waitReady, type Child } from "./procs";

const ROOT = join(import.meta.dir, "..", "..");
export const PORTKEY_VERSION = "1.15.2";

export interface Peer {
  name: "essentials" | "portkey";
  url: string;
  child: Child;
  /** Headers every request to it carries (Portkey's provider and upstream). */
  headers: Record<string, string>;
  /** Its stderr with JavaScriptCore's GC log on, when asked for (lib/gc-log.ts). */
  gcLog: string | null;
  /** Its heap probe's file when run with the collector off (lib/heap-probe.ts). */
  heapProbe: string | null;
}

/** Portkey's entry script under a `--prefix` install directory (or the package directory itself); null when absent. */
export function portkeyEntry(dir: string | undefined): string | null {
  if (!dir) return null;
  for (const c of [
    join(dir, "node_modules", "@portkey-ai", "gateway", "build", "start-server.js"),
    join(dir, "build", "start-server.js"),
  ])
    if (existsSync(c)) return c;
  return null;
}

export async function startPeers(o: {
  simUrl: string;
  tokens: string[];
  core: number | null;
  portkeyDir: string | undefined;
  log: (...a: unknown[]) => void;
  /** A directory for each peer's GC log (BUN_JSC_logGC), as the gateway's; none when null. */
  gcLogDir?: string | null;
  /** A directory for each peer's heap probe: run with the collector off (lib/heap-probe.ts). */
  heapProbeDir?: string | null;
  /** A directory for each peer's heap probe with the collector on: readings collect first (gcProbe). */
  gcProbeDir?: string | null;
}): Promise<Peer[]> {
  const bun = process.execPath;
  const env = {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: process.env.HOME ?? "/root",
    BUN_CONFIG_MAX_HTTP_REQUESTS: "4096",
  };
  const peers: Peer[] = [];
  const gcLogOf = (name: Peer["name"]) => (o.gcLogDir ? join(o.gcLogDir, `${name}-gc.log`) : null);
  const gcEnv: Record<string, string> = o.gcLogDir ? { BUN_JSC_logGC: "1" } : {};
  const probeDir = o.heapProbeDir ?? o.gcProbeDir;
  const probeOf = (name: Peer["name"]) => (probeDir ? join(probeDir, `${name}-heap.txt`) : null);
  const probe = o.heapProbeDir ? collectorOff : gcProbe;
  const port = await freePort();
  const essentialsGc = gcLogOf("essentials");
  const essentialsOff = probe(probeOf("essentials"));
  const essentials = spawnChild(
    "essentials proxy",
    [bun, ...essentialsOff.flags, join(ROOT, "bench/essentials-proxy.ts")],
    {
      ...env,
      ...gcEnv,
      ...essentialsOff.env,
      ESSENTIALS_PORT: String(port),
      UPSTREAM: `${o.simUrl}/sim`,
      ESSENTIALS_KEYS: o.tokens.join(","),
    },
    o.core,
    undefined,
    essentialsGc ?? undefined,
  );
  const url = `http://127.0.0.1:${port}`;
  await waitReady(essentials, `${url}/health`);
  peers.push({
    name: "essentials",
    url,
    child: essentials,
    headers: {},
    gcLog: essentialsGc,
    heapProbe: probeOf("essentials"),
  });

  const entry = portkeyEntry(o.portkeyDir);
  if (!entry) {
    o.log(
      `Portkey on Bun: skipped (${o.portkeyDir ? `no @portkey-ai/gateway under ${o.portkeyDir}` : "not installed"}; npm install --prefix /tmp/portkey @portkey-ai/gateway@${PORTKEY_VERSION}, then --portkey=/tmp/portkey)`,
    );
    return peers;
  }
  const pkPort = await freePort();
  // Portkey's own script, run by Bun; --headless skips its console UI.
  const portkeyGc = gcLogOf("portkey");
  const portkeyOff = probe(probeOf("portkey"));
  const portkey = spawnChild(
    "portkey",
    [bun, ...portkeyOff.flags, entry, `--port=${pkPort}`, "--headless"],
    { ...env, ...gcEnv, ...portkeyOff.env },
    o.core,
    undefined,
    portkeyGc ?? undefined,
  );
  const pkUrl = `http://127.0.0.1:${pkPort}`;
  await waitReady(portkey, `${pkUrl}/`);
  peers.push({
    name: "portkey",
    url: pkUrl,
    child: portkey,
    headers: { "x-portkey-provider": "openai", "x-portkey-custom-host": `${o.simUrl}/sim/openai/v1` },
    gcLog: portkeyGc,
    heapProbe: probeOf("portkey"),
  });
  o.log(`Portkey ${PORTKEY_VERSION} on Bun at ${pkUrl} (${entry})`);
  return peers;
}
