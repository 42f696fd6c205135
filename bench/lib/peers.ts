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
import { freePort, spawnChild, waitReady, type Child } from "./procs";

const ROOT = join(import.meta.dir, "..", "..");
export const PORTKEY_VERSION = "1.15.2";

export interface Peer {
  name: "essentials" | "portkey";
  url: string;
  child: Child;
  /** Headers every request to it carries (Portkey's provider and upstream). */
  headers: Record<string, string>;
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
}): Promise<Peer[]> {
  const bun = process.execPath;
  const env = {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: process.env.HOME ?? "/root",
    BUN_CONFIG_MAX_HTTP_REQUESTS: "4096",
  };
  const peers: Peer[] = [];
  const port = await freePort();
  const essentials = spawnChild(
    "essentials proxy",
    [bun, join(ROOT, "bench/essentials-proxy.ts")],
    { ...env, ESSENTIALS_PORT: String(port), UPSTREAM: `${o.simUrl}/sim`, ESSENTIALS_KEYS: o.tokens.join(",") },
    o.core,
  );
  const url = `http://127.0.0.1:${port}`;
  await waitReady(essentials, `${url}/health`);
  peers.push({ name: "essentials", url, child: essentials, headers: {} });

  const entry = portkeyEntry(o.portkeyDir);
  if (!entry) {
    o.log(
      `Portkey on Bun: skipped (${o.portkeyDir ? `no @portkey-ai/gateway under ${o.portkeyDir}` : "not installed"}; npm install --prefix /tmp/portkey @portkey-ai/gateway@${PORTKEY_VERSION}, then --portkey=/tmp/portkey)`,
    );
    return peers;
  }
  const pkPort = await freePort();
  // Portkey's own script, run by Bun; --headless skips its console UI.
  const portkey = spawnChild("portkey", [bun, entry, `--port=${pkPort}`, "--headless"], env, o.core);
  const pkUrl = `http://127.0.0.1:${pkPort}`;
  await waitReady(portkey, `${pkUrl}/`);
  peers.push({
    name: "portkey",
    url: pkUrl,
    child: portkey,
    headers: { "x-portkey-provider": "openai", "x-portkey-custom-host": `${o.simUrl}/sim/openai/v1` },
  });
  o.log(`Portkey ${PORTKEY_VERSION} on Bun at ${pkUrl} (${entry})`);
  return peers;
}
