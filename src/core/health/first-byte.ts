/**
 * Upstream time to first byte per provider, as this instance sees it: the last WINDOW samples
 * of each provider, for its 95th percentile (the hedge delay) and a recent average (the
 * `provider.sort: latency` order). One window serves both, so the two never disagree about
 * what was measured.
 */

/** Samples kept per provider: enough for a stable p95, few enough to follow a change within minutes. */
export const WINDOW = 200;
/** Below this many samples a provider's p95 is unknown (a few calls say little about a tail). */
export const MIN_SAMPLES = 10;

interface Ring {
  samples: Float64Array;
  /** Samples written so far (the next slot is `n % WINDOW`). */
  n: number;
  /** Exponentially weighted average (each new sample counts 20 %). */
  recent: number;
}

export class FirstByteWindow {
  private rings = new Map<string, Ring>();

  /** One first-byte time in ms: a success's, or how long a cancelled call had waited (a lower bound). */
  add(provider: string, ms: number): void {
    let r = this.rings.get(provider);
    if (!r) this.rings.set(provider, (r = { samples: new Float64Array(WINDOW), n: 0, recent: ms }));
    else r.recent = r.recent * 0.8 + ms * 0.2;
    r.samples[r.n % WINDOW] = ms;
    r.n++;
  }

  /** The recent average in ms; undefined before the first sample. */
  recent(provider: string): number | undefined {
    return this.rings.get(provider)?.recent;
  }

  /** The 95th percentile (nearest rank) of the window in ms; undefined below MIN_SAMPLES. */
  p95(provider: string): number | undefined {
    const r = this.rings.get(provider);
    if (!r || r.n < MIN_SAMPLES) return undefined;
    const sorted = r.samples.slice(0, Math.min(r.n, WINDOW)).sort();
    return sorted[Math.ceil(sorted.length * 0.95) - 1];
  }
}

/** How long to wait for `provider`'s first byte before hedging: its p95, within the bounds; the ceiling while it is unknown. */
export function hedgeDelayMs(window: FirstByteWindow, provider: string, minMs: number, maxMs: number): number {
  const p95 = window.p95(provider);
  return p95 === undefined ? maxMs : Math.min(maxMs, Math.max(minMs, Math.round(p95)));
}
