/**
 * What the statistics use-cases need from storage. Implemented over the rollup tables by
 * src/db/repos/rollups.ts; every method reads rollups only, never usage events.
 */
import type { Granularity, Window } from "./periods";

/** Successful calls and their tokens (cache hits excluded) for one model and provider. */
export interface ModelTokenRow {
  model: string;
  /** Empty when unknown. */
  provider: string;
  maker: string;
  calls: number;
  tokens: number;
}

export interface SeriesRow {
  /** Bucket start (UTC day, or Monday of the ISO week). */
  t: Date;
  model: string;
  tokens: number;
}

export interface AppTokenRow {
  app: string;
  calls: number;
  tokens: number;
}

export interface DailyUsageRow {
  /** `YYYY-MM-DD`. */
  day: string;
  model: string;
  requests: number;
  failedRequests: number;
  cacheHits: number;
  promptTokens: number;
  completionTokens: number;
  costMicro: bigint;
}

export type StatsDimension = "model" | "app";

export interface StatsReader {
  /** Changes whenever the rollups change; caches key on it. */
  version(): Promise<number>;
  /** Every call (any outcome and modality) per model. */
  modelCalls(w: Window): Promise<{ model: string; calls: number }[]>;
  /** Successful calls (status < 400) per model, provider and maker, any modality. */
  modelTokens(w: Window): Promise<ModelTokenRow[]>;
  /** Successful text-modality tokens per bucket and model; `w` is made of whole buckets. */
  textTokenSeries(w: Window, granularity: Granularity): Promise<SeriesRow[]>;
  /** Successful calls per app. */
  appTokens(w: Window): Promise<AppTokenRow[]>;
  /** Names used by at least `minAccounts` distinct accounts in the window. */
  eligible(dim: StatsDimension, w: Window, minAccounts: number): Promise<Set<string>>;
  /** One account's usage per UTC day and model, days `from`..`to` inclusive. */
  usageDaily(userId: string, from: string, to: string): Promise<DailyUsageRow[]>;
}
