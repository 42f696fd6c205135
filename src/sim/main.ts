/**
 * Standalone simulator (`npm run sim`): listens on SIM_HOST:SIM_PORT (default
 * 127.0.0.1:8090) and prints each simulated provider's base URL.
 */
import { simProviders, startSimulator } from "./index.ts";
import { ConfigError, loadConfig } from "../config";

let cfg;
try {
  cfg = loadConfig();
} catch (e) {
  if (!(e instanceof ConfigError)) throw e;
  console.error(e.message);
  process.exit(2);
}
// SIM_PORT's 0 means "any free port" for the gateway's in-process simulator; a standalone one
// gets a port one can type.
const port = cfg.SIM_PORT || 8090;
const hostname = cfg.SIM_HOST;
const sim = await startSimulator({ port, hostname });

console.log(`upstream simulator listening on ${sim.url}`);
for (const provider of simProviders()) console.log(`  ${provider.padEnd(10)} ${sim.baseUrl(provider)}`);
console.log(`  stats      GET ${sim.url}/sim/stats   reset: POST ${sim.url}/sim/reset`);

for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.on(signal, () => {
    void sim.stop().then(() => process.exit(0));
  });
}
