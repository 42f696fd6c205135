/**
 * Standalone simulator (`npm run sim`): listens on SIM_HOST:SIM_PORT (default
 * 127.0.0.1:8090) and prints each simulated provider's base URL.
 */
import { simProviders, startSimulator } from "./index.ts";

const port = Number(process.env.SIM_PORT ?? 8090);
const hostname = process.env.SIM_HOST ?? "127.0.0.1";
const sim = await startSimulator({ port, hostname });

console.log(`upstream simulator listening on ${sim.url}`);
for (const provider of simProviders()) console.log(`  ${provider.padEnd(10)} ${sim.baseUrl(provider)}`);
console.log(`  stats      GET ${sim.url}/sim/stats   reset: POST ${sim.url}/sim/reset`);

for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.on(signal, () => {
    void sim.stop().then(() => process.exit(0));
  });
}
