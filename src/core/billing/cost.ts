/** What a call cost, as the client is told it (the `cost` object of an answer). */
import { microToKrwRounded, microToUsd } from "../../lib/money";

export interface Cost {
  micro: bigint;
  usd: number;
  krw: number;
  fx_rate: number;
  markup_rate: number;
}

/** `micro` as the client is told it: KRW, USD at the deployment's rate, no markup. */
export function costOf(micro: bigint, fxMilli: bigint): Cost {
  return {
    micro,
    usd: microToUsd(micro, fxMilli),
    krw: microToKrwRounded(micro),
    fx_rate: Number(fxMilli) / 1000,
    markup_rate: 0,
  };
}
