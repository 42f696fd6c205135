/**
 * The hedge port of the chat core (docs/hedging.md): the delay comes from the providers'
 * first-byte window, and every race is counted in `/metrics`. A cancelled loser's waiting time
 * goes back into its provider's window: it had waited at least that long, and leaving it out
 * would make the slow calls that hedging cuts short vanish from the p95 that times the hedges.
 */
import type { HedgePort } from "../core/chat/ports";
import { FirstByteWindow, hedgeDelayMs } from "../core/health/first-byte";
import type { GatewayMetrics } from "./metrics";

export function hedgePort(
  window: FirstByteWindow,
  cfg: { HEDGE_MIN_DELAY_MS: number; HEDGE_MAX_DELAY_MS: number },
  metrics: GatewayMetrics,
): HedgePort {
  return {
    delayMs: (provider) => hedgeDelayMs(window, provider, cfg.HEDGE_MIN_DELAY_MS, cfg.HEDGE_MAX_DELAY_MS),
    ended(outcome, loser) {
      metrics.hedges.inc({ outcome });
      if (!loser) return;
      metrics.hedgeCostKrw.inc({ provider: loser.provider }, Number(loser.costMicro) / 1e6);
      window.add(loser.provider, loser.waitedMs);
    },
  };
}
