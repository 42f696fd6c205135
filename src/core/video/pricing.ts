/**
 * What a video job holds and what it costs, in micro-won, from the catalog's video prices.
 *
 * - Per second of output at the output resolution: the hold is the cost (the duration is
 *   what we asked for; a vendor's 5.042 s clip is billed as 5 s).
 * - Family G Omni, per 1,000 output tokens reported on completion: the hold is the most the
 *   model can produce (its longest length × the estimated tokens per second); the charge is
 *   the reported tokens, never more than the hold (the hold is the quote the client saw);
 *   with no token count reported, the hold is charged.
 * - `charge_amount_krw` (delegated keys): hold and charge are exactly that amount.
 */
import type { VideoPricing } from "../catalog/types";
import { GatewayError, text } from "../errors";
import { ceilDiv, krwToMicro, MICRO_PER_KRW } from "../../lib/money";
import type { BillingMode, NormalizedVideoRequest } from "./types";

export interface VideoPrice {
  billing: BillingMode;
  holdMicro: bigint;
  /** The charge on success for `per_second` and `fixed`; null for `per_token`. */
  priceMicro: bigint | null;
  krwPer1kTokens: number | null;
}

export function priceVideo(
  pricing: VideoPricing,
  req: NormalizedVideoRequest,
  chargeAmountKrw: number | null,
): VideoPrice {
  if (chargeAmountKrw !== null) {
    const micro = krwToMicro(BigInt(chargeAmountKrw));
    return { billing: "fixed", holdMicro: micro, priceMicro: micro, krwPer1kTokens: null };
  }
  if (pricing.krwPerSecond) {
    const perSecond = pricing.krwPerSecond[req.outputResolution];
    if (perSecond === undefined || req.durationSeconds === null) throw unpriced(req);
    const micro = BigInt(perSecond) * BigInt(req.durationSeconds) * MICRO_PER_KRW;
    return { billing: "per_second", holdMicro: micro, priceMicro: micro, krwPer1kTokens: null };
  }
  const perK = pricing.krwPer1kOutputTokens;
  const tps = pricing.estOutputTokensPerSecond?.[req.outputResolution];
  if (perK === null || tps === undefined || pricing.maxSeconds === null) throw unpriced(req);
  const maxTokens = tps * pricing.maxSeconds;
  return { billing: "per_token", holdMicro: tokenCostMicro(maxTokens, perK), priceMicro: null, krwPer1kTokens: perK };
}

/** KRW per 1,000 tokens → micro-won for `tokens`, rounded up. */
export function tokenCostMicro(tokens: number, krwPer1k: number): bigint {
  return ceilDiv(BigInt(Math.max(0, Math.floor(tokens))) * BigInt(krwPer1k) * MICRO_PER_KRW, 1000n);
}

/** The charge of a succeeded job. */
export function jobCostMicro(
  job: { billing: BillingMode; holdMicro: bigint; priceMicro: bigint | null; krwPer1kTokens: number | null },
  outputTokens: number | null,
): bigint {
  if (job.billing !== "per_token") return job.priceMicro ?? job.holdMicro;
  if (outputTokens === null || job.krwPer1kTokens === null) return job.holdMicro;
  const cost = tokenCostMicro(outputTokens, job.krwPer1kTokens);
  return cost > job.holdMicro ? job.holdMicro : cost;
}

function unpriced(req: NormalizedVideoRequest): GatewayError {
  return new GatewayError(
    "unsupported_parameter",
    text(
      `이 모델은 ${req.outputResolution} 해상도의 가격이 없어 요청할 수 없습니다.`,
      `This model has no price for the ${req.outputResolution} resolution and cannot be requested.`,
    ),
  );
}
