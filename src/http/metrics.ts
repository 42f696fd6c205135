/** The gateway's Prometheus metrics (served at GET /metrics). */
import { Counter, Gauge, Histogram, Registry } from "../lib/metrics";

export class GatewayMetrics {
  readonly registry = new Registry();
  /** Holds this process has opened and not yet closed. */
  openHolds = 0;
  readonly requests = this.registry.add(new Counter("gateway_http_requests_total", "HTTP requests by route, method and status"));
  readonly latency = this.registry.add(
    new Histogram("gateway_http_request_duration_seconds", "Time to the response head, by route", [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30]),
  );
  readonly upstreamCalls = this.registry.add(new Counter("gateway_upstream_calls_total", "Upstream calls by provider and outcome"));
  readonly upstreamLatency = this.registry.add(
    new Histogram("gateway_upstream_first_byte_seconds", "Upstream time to first byte, by provider", [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60]),
  );
  readonly chargesCapped = this.registry.add(
    new Counter("gateway_charges_capped_total", "Charges the ledger capped at their hold: the usage cost more than the hold's estimate (the difference is not billed)"),
  );
  constructor() {
    this.chargesCapped.inc(undefined, 0); // shown as 0 before the first one
    this.registry.add(new Gauge("gateway_holds_open", "Credit holds opened by this process and not yet settled or released", () => this.openHolds));
  }
}
