/**
 * The process's money path: its one ledger (docs/ledger.md) with its metrics and the
 * invalidation bus's lease retirements, the keeper of running calls' holds, and the settles of
 * answered calls.
 */
import type { Config } from "../config";
import type { Database } from "../db/client";
import type { InvalidationBus } from "../db/invalidation";
import { SqlLedger } from "../db/repos/ledger";
import { HoldKeeper } from "../core/billing/hold-keeper";
import { Settlements } from "../core/billing/settlements";
import type { GatewayMetrics } from "../http/metrics";
import { log } from "../lib/log";
import { Gauge } from "../lib/metrics";

/** The ledger wait's label sets: constants, as every call passes here twice. */
const HOLD_STEP = { step: "hold" };
const SETTLE_STEP = { step: "settle" };

export function moneyPath(cfg: Config, db: Database, bus: InvalidationBus, metrics: GatewayMetrics) {
  const ledger = new SqlLedger(db, {
    commit: cfg.LEDGER_COMMIT,
    leases: cfg.LEDGER_LEASES,
    hooks: {
      onOpenChange: (delta) => (metrics.openHolds += delta),
      onWait: (_step, seconds) => metrics.ledgerWait.observe(seconds, HOLD_STEP),
      onCapped: (id, askedMicro) => {
        metrics.chargesCapped.inc();
        log.warn("charge above its hold capped at the hold", { request_id: id, asked_micro: askedMicro.toString() });
      },
    },
    retireElsewhere: (userId) => bus.publish({ t: "leases", id: userId }),
  });
  // Running calls keep their holds from expiring (a stream may outlive HOLD_TTL_SECONDS).
  const keeper = new HoldKeeper(ledger, cfg.HOLD_TTL_SECONDS, (e) => log.warn("hold renewal failed", { error: e }));
  // Limits that changed (a key's budget, an account's membership) apply at once: leased room goes back.
  bus.on((ev) => {
    if (ev.t === "key") void ledger.leases?.retireAll({ keyId: ev.id });
    else if (ev.t === "user" || ev.t === "leases") void ledger.leases?.retireAll({ userId: ev.id });
    else if (ev.t === "all") void ledger.leases?.retireAll();
  });
  const settlements = new Settlements(
    ledger,
    (call, error) =>
      log.error("settle failed after every retry; the sweeper releases the hold uncharged", {
        request_id: call.id,
        error,
      }),
    cfg.LEDGER_SETTLE,
    cfg.DB_QUERY_TIMEOUT_MS || 5000,
    {
      landed: (event, cost) => metrics.settled(event, cost),
      waited: (seconds) => metrics.ledgerWait.observe(seconds, SETTLE_STEP),
    },
  );
  metrics.registry.add(
    new Gauge(
      "gateway_leases_open",
      "Credit leases this process holds (LEDGER_LEASES=on)",
      () => ledger.leases?.totals().open ?? 0,
    ),
  );
  metrics.registry.add(
    new Gauge(
      "gateway_leased_krw",
      "Credit room still available in this process's leases, KRW",
      () => Number(ledger.leases?.totals().availableMicro ?? 0n) / 1e6,
    ),
  );
  return { ledger, keeper, settlements };
}
