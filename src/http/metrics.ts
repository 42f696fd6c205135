/**
 * The gateway's Prometheus metrics (served at GET /metrics behind METRICS_TOKEN);
 * docs/observability.md lists them. No label names an account, key, user or organization, and
 * money and token amounts are process totals, never split by model or provider: an account
 * that is the only caller of a model would otherwise have its exact usage read off its series
 * (the public stats hide such a model below their distinct-accounts threshold).
 */
import type { UsageEvent } from "../core/billing/ledger";
import type { VideoObserver } from "../core/video/ports";
import { Counter, Gauge, GaugeSet, Histogram, Registry } from "../lib/metrics";
import { processMetrics } from "../lib/process-metrics";

const UPSTREAM_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

const TOKENS_INPUT = { kind: "input" };
const TOKENS_OUTPUT = { kind: "output" };
const TOKENS_CACHED = { kind: "cached_input" };
const TOKENS_CACHE_WRITE = { kind: "cache_write" };

export class GatewayMetrics {
  readonly registry = new Registry();
  /** Holds this process has opened and not yet closed. */
  openHolds = 0;
  readonly requests = this.registry.add(
    new Counter("gateway_http_requests_total", "HTTP requests by route, method and status"),
  );
  readonly latency = this.registry.add(
    new Histogram(
      "gateway_http_request_duration_seconds",
      "Time to the response head, by route",
      [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    ),
  );
  readonly upstreamCalls = this.registry.add(
    new Counter("gateway_upstream_calls_total", "Upstream calls (text and video) by provider and outcome"),
  );
  readonly upstreamLatency = this.registry.add(
    new Histogram(
      "gateway_upstream_first_byte_seconds",
      "Upstream time to first byte of successful calls, by provider",
      UPSTREAM_BUCKETS,
    ),
  );
  readonly chargesCapped = this.registry.add(
    new Counter(
      "gateway_charges_capped_total",
      "Charges the ledger capped at their hold: the usage cost more than the hold's estimate (the difference is not billed)",
    ),
  );
  readonly ledgerWait = this.registry.add(
    new Histogram(
      "gateway_ledger_wait_seconds",
      "How long calls waited for their hold or settle (step), leases, batching and retries included",
      [0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 1, 5],
    ),
  );
  readonly tokens = this.registry.add(
    new Counter(
      "gateway_tokens_total",
      "Tokens of settled calls by kind (input, output, cached_input, cache_write), all models together",
    ),
  );
  readonly countTokens = this.registry.add(
    new Counter(
      "gateway_count_tokens_total",
      "count_tokens requests by outcome: upstream (the provider counted, on the operator's or a BYOK credential), estimate (the gateway's own), no_credit (estimate: the account has no credit), throttled (429)",
    ),
  );
  readonly hedges = this.registry.add(
    new Counter(
      "gateway_hedges_total",
      "Hedged calls by outcome: primary_won, hedge_won, not_needed (answered or failed before the hedge delay), both_failed",
    ),
  );
  readonly continuations = this.registry.add(
    new Counter(
      "gateway_continuations_total",
      "Streams broken mid-answer and continued by another candidate (continue_on_failure), by the provider that broke, the one that finished, and how the stream ended",
    ),
  );
  readonly hedgeCostKrw = this.registry.add(
    new Counter(
      "gateway_hedge_cost_krw_total",
      "What cancelled hedge losers may cost us, by provider: their input tokens at their price, estimated (charged to the client with the answer)",
    ),
  );
  readonly droppedParams = this.registry.add(
    new Counter(
      "gateway_dropped_params_total",
      "Request settings an adapter could not send to the provider that answered, by provider and parameter (x-gateway-warnings)",
    ),
  );
  readonly costKrw = this.registry.add(
    new Counter(
      "gateway_cost_krw_total",
      "KRW charged for settled calls, all models together (at the call's price; a capped charge counts its price)",
    ),
  );
  readonly videoPolls = this.registry.add(
    new Histogram(
      "gateway_video_poll_seconds",
      "Duration of video task status polls, by provider and outcome",
      UPSTREAM_BUCKETS,
    ),
  );
  readonly videoJobs = this.registry.add(
    new Counter(
      "gateway_video_jobs_total",
      "Video jobs that entered a state on this instance, by family and state (accepted, succeeded, failed, canceled)",
    ),
  );
  /** Read from the database before a scrape: the same on every instance. */
  readonly videoProcessing = this.registry.add(
    new GaugeSet("gateway_video_jobs_processing", "Video jobs in progress, by family (all instances)"),
  );
  readonly videoQueueDepth = this.registry.add(
    new GaugeSet(
      "gateway_video_queue_depth",
      "Video jobs due for a poll that no poller has claimed yet, by family (all instances)",
    ),
  );
  private process = processMetrics(this.registry);

  /** What the video pollers and submits report, counted here. */
  readonly video: VideoObserver = {
    upstream: (provider, step, outcome, ms) => {
      this.upstream(provider, outcome, ms);
      if (step === "poll") this.videoPolls.observe(ms / 1000, { provider, outcome });
    },
    settled: (event, costMicro) => this.settled(event, costMicro),
    job: (family, state) => this.videoJobs.inc({ family, state }),
  };

  constructor() {
    this.chargesCapped.inc(undefined, 0); // shown as 0 before the first one
    this.registry.add(
      new Gauge(
        "gateway_holds_open",
        "Credit holds opened by this process and not yet settled or released",
        () => this.openHolds,
      ),
    );
  }

  /** An upstream call ended (chat attempt, video submit, poll or download). */
  upstream(provider: string, outcome: string, ms: number): void {
    this.upstreamCalls.inc({ provider, outcome });
    if (outcome === "ok") this.upstreamLatency.observe(ms / 1000, { provider });
  }

  /** A call was charged: its tokens and cost, added to the process totals (no model: see above). */
  settled(event: UsageEvent, costMicro: bigint): void {
    // The label sets are constants: every charge passes here.
    if (event.promptTokens > 0) this.tokens.inc(TOKENS_INPUT, event.promptTokens);
    if (event.completionTokens > 0) this.tokens.inc(TOKENS_OUTPUT, event.completionTokens);
    if (event.cachedTokens > 0) this.tokens.inc(TOKENS_CACHED, event.cachedTokens);
    if (event.cacheWriteTokens > 0) this.tokens.inc(TOKENS_CACHE_WRITE, event.cacheWriteTokens);
    if (costMicro > 0n) this.costKrw.inc(undefined, Number(costMicro) / 1e6);
  }

  stop(): void {
    this.process.stop();
  }
}
