/**
 * Standalone simulator (`npm run sim`): listens on SIM_HOST:SIM_PORT (default
 * 127.0.0.1:8090) and prints each simulated provider's base URL.
 */
import { simProviders, startSimulator } from "./index.ts";

// The simulator stands alone (it imports nothing of the gateway), so it reads its two
// variables itself; both are documented with the gateway's configuration.
const rawPort = process.env.SIM_PORT ?? "0";
if (!/^\d{1,5}$/.test(rawPort) || Number(rawPort) > 65535) {
  console.error(`SIM_PORT: expected a port from 0 to 65535, got "${rawPort}"`);
  process.exit(2);
}
// SIM_PORT's 0 means "any free port" for the gateway's in-process simulator; a standalone one
// gets a port one can type.
const port = Number(rawPort) || 8090;
const hostname = process.env.SIM_HOST || "127.0.0.1";
const sim = await startSimulator({ port, hostname });

console.log(`upstream simulator listening on ${sim.url}`);
for (const provider of simProviders()) console.log(`  ${provider.padEnd(10)} ${sim.baseUrl(provider)}`);
console.log(`  stats      GET ${sim.url}/sim/stats   reset: POST ${sim.url}/sim/reset`);

for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.on(signal, () => {
    void sim.stop().then(() => process.exit(0));
  });
}
