/**
 * Circuit breaking wired to its settings, its metrics and, with REDIS_URL, to the other
 * instances (src/core/health holds the rules, src/lib/circuit-board.ts the Redis side).
 * CIRCUIT_BREAKER=off leaves no tracker: the attempt loop then calls every candidate.
 */
import type { Config } from "./config";
import { HealthTracker } from "./core/health/tracker";
import type { CircuitState } from "./core/health/breaker";
import { RedisCircuitBoard } from "./lib/circuit-board";
import { Counter, GaugeSet, type Registry } from "./lib/metrics";
import { log } from "./lib/log";

const STATE_VALUE: Record<CircuitState, number> = { closed: 0, half_open: 1, open: 2 };

export interface UpstreamHealth {
  tracker: HealthTracker | null;
  stop(): void;
}

export function upstreamHealth(cfg: Config, registry: Registry): UpstreamHealth {
  if (!cfg.CIRCUIT_BREAKER) return { tracker: null, stop() {} };
  const tracker = new HealthTracker({
    windowMs: cfg.CIRCUIT_WINDOW_SECONDS * 1000,
    minCalls: cfg.CIRCUIT_MIN_CALLS,
    failureRatio: cfg.CIRCUIT_FAILURE_PERCENT / 100,
    coolDownMs: cfg.CIRCUIT_COOLDOWN_MS,
    probes: cfg.CIRCUIT_PROBES,
    minAccounts: cfg.CIRCUIT_MIN_ACCOUNTS,
    slowMs: cfg.CIRCUIT_SLOW_CALL_MS,
  });
  const gauge = new GaugeSet(
    "gateway_circuit_state",
    "Circuit of each provider (model `*`) and provider × model this instance knows: 0 closed, 1 half-open, 2 open",
  );
  // Read at each scrape (not through the registry's 5-second collector cache): a state is cheap to read.
  registry.add({
    render: () => {
      gauge.replace(
        tracker
          .states()
          .map((c) => ({ labels: { provider: c.provider, model: c.model }, value: STATE_VALUE[c.state] })),
      );
      return gauge.render();
    },
  });
  const transitions = registry.add(
    new Counter(
      "gateway_circuit_transitions_total",
      "Circuit state changes by provider, model and new state (`remote`: learned from another instance)",
    ),
  );
  const board = cfg.REDIS_URL
    ? new RedisCircuitBoard(
        cfg.REDIS_URL,
        (e) => tracker.learned(e.provider, e.model, e.until),
        cfg.CIRCUIT_COOLDOWN_MS,
      )
    : null;
  tracker.onTransition((t) => {
    transitions.inc({ provider: t.provider, model: t.model, to: t.to, source: t.remote ? "remote" : "local" });
    if (t.to !== "half_open")
      log.warn(t.to === "open" ? "circuit opened" : "circuit closed", {
        provider: t.provider,
        model: t.model,
        remote: t.remote,
      });
    if (!board || t.remote) return;
    if (t.to === "open") board.opened({ provider: t.provider, model: t.model, until: t.until });
    else if (t.to === "closed") board.closed(t.provider, t.model);
  });
  return { tracker, stop: () => board?.close() };
}
