/**
 * The settle step with a meter: a charge that landed (the ledger said it closed the hold now,
 * not before) is reported once with its usage event, for the token and cost counters.
 */
import type { Ledger, UsageEvent } from "./ledger";

export type SettleMeter = (event: UsageEvent, costMicro: bigint) => void;

export function meteredSettle(ledger: Pick<Ledger, "settle">, meter: SettleMeter): Pick<Ledger, "settle"> {
  return {
    async settle(id, costMicro, tokens, event) {
      const closed = await ledger.settle(id, costMicro, tokens, event);
      if (closed && event) meter(event, costMicro);
      return closed;
    },
  };
}
