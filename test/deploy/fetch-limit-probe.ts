/**
 * Probe for test/deploy/fetch-limit.test.ts: applies the gateway's fetch limit exactly as
 * src/main.ts does (first import), then opens PROBE_FETCHES fetches at once to PROBE_URL.
 */
import "../../src/boot/fetch-limit-apply";

const n = Number(process.env.PROBE_FETCHES ?? 300);
await Promise.all(Array.from({ length: n }, () => fetch(process.env.PROBE_URL!).then((r) => r.text())));
console.log(`pid ${process.pid} limit ${process.env.BUN_CONFIG_MAX_HTTP_REQUESTS}`);
