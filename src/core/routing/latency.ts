/**
 * `latency`: live latency per model, measured from this instance's real traffic (every chat
 * call, policy or not), as time to first token and total time. Each model keeps a decayed
 * average: a new sample counts fully, older ones fade per sample (×0.7) and with age
 * (half-life 5 minutes), so a model that slowed down loses traffic within a few calls and
 * stale knowledge stops mattering. A failed attempt counts as a 10 s sample. Entries without
 * fresh data are tried first (to measure them), and a small exploration share sends a call to
 * another entry so a recovered model is seen again.
 */

export type LatencyMetric = "ttft" | "total" | "blend";

interface Stat {
  ttft: number;
  total: number;
  /** Sum of sample weights at `at`. */
  w: number;
  at: number;
}

const PER_SAMPLE_KEEP = 0.7;
const HALF_LIFE_MS = 5 * 60_000;
/** Below this decayed weight a model counts as unmeasured. */
const FRESH_WEIGHT = 0.25;
export const FAILURE_PENALTY_MS = 10_000;

export interface LatencyRanking {
  /** Entry indexes, first to try first. */
  order: number[];
  /** The first entry was picked by exploration, not by speed. */
  explored: boolean;
  /** The first entry had no fresh data. */
  unmeasured: boolean;
  /** Score of the first entry in ms (null when unmeasured). */
  scoreMs: number | null;
}

export class LatencyTracker {
  private stats = new Map<string, Stat>();

  constructor(private now: () => number = () => Date.now()) {}

  /**
   * One finished attempt. Recorded under the model id and under `model@provider`, so entries
   * pinned to a provider rank by that offering alone.
   */
  observe(model: string, provider: string | null, ok: boolean, ttftMs: number, totalMs: number): void {
    const ttft = ok ? ttftMs : Math.max(ttftMs, FAILURE_PENALTY_MS);
    const total = ok ? totalMs : Math.max(totalMs, FAILURE_PENALTY_MS);
    this.add(model, ttft, total);
    if (provider) this.add(`${model}@${provider}`, ttft, total);
  }

  /** The decayed averages of a model (or `model@provider`), null when unmeasured or stale. */
  get(key: string): { ttftMs: number; totalMs: number; weight: number } | null {
    const s = this.stats.get(key);
    if (!s) return null;
    const weight = s.w * decay(this.now() - s.at);
    return weight < FRESH_WEIGHT ? null : { ttftMs: s.ttft, totalMs: s.total, weight };
  }

  rank(
    models: readonly string[],
    metric: LatencyMetric,
    exploration: number,
    random: () => number = Math.random,
  ): LatencyRanking {
    const scored = models.map((m, i) => {
      const s = this.get(m);
      return {
        i,
        ms:
          s === null
            ? null
            : metric === "ttft"
              ? s.ttftMs
              : metric === "total"
                ? s.totalMs
                : (s.ttftMs + s.totalMs) / 2,
      };
    });
    // Unmeasured first (in entry order), then fastest first.
    scored.sort(
      (a, b) => (a.ms === null ? -1 : 0) - (b.ms === null ? -1 : 0) || (a.ms ?? 0) - (b.ms ?? 0) || a.i - b.i,
    );
    let explored = false;
    if (scored.length > 1 && scored[0]!.ms !== null && exploration > 0 && random() < exploration) {
      const pick = 1 + Math.floor(random() * (scored.length - 1));
      const [e] = scored.splice(pick, 1);
      scored.unshift(e!);
      explored = true;
    }
    const first = scored[0]!;
    return {
      order: scored.map((s) => s.i),
      explored,
      unmeasured: first.ms === null,
      scoreMs: first.ms === null ? null : Math.round(first.ms),
    };
  }

  private add(key: string, ttft: number, total: number): void {
    const now = this.now();
    const s = this.stats.get(key);
    if (!s) {
      this.stats.set(key, { ttft, total, w: 1, at: now });
      return;
    }
    const kept = s.w * decay(now - s.at) * PER_SAMPLE_KEEP;
    const w = kept + 1;
    s.ttft = (s.ttft * kept + ttft) / w;
    s.total = (s.total * kept + total) / w;
    s.w = w;
    s.at = now;
  }
}

function decay(ageMs: number): number {
  return ageMs <= 0 ? 1 : 0.5 ** (ageMs / HALF_LIFE_MS);
}
