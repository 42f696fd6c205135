/**
 * The public statistics as use-cases over the rollups, and a small cache in front of them.
 * Privacy: a model or app is named only when at least `minAccounts` distinct accounts used it
 * in the window shown (not keys: an account mints as many as it likes; and only accounts that
 * paid for the call and were old enough, see the rollups); what it hides still counts in totals
 * (and in `Others`). With `noise`, every published figure is blurred by a keyed offset
 * (noise.ts), and rankings, trends and shares are computed from the blurred figures.
 */
import {
  HOUR_MS,
  isoDate,
  periodWindows,
  seriesBuckets,
  type Granularity,
  type Period,
  type Range,
  type Window,
} from "./periods";
import type { StatsDimension, StatsReader } from "./ports";
import { OTHERS, sharePct, topBy, trendPct } from "./rank";
import type { AppsStats, ModelsStats, Rankings, UsageTimeseries } from "./shapes";
import { CALL_NOISE, EXACT, TOKEN_NOISE, type StatsNoise } from "./noise";

export const TOP_MODELS = 20;
export const LEADERBOARD_SIZE = 20;
export const MARKET_SHARE_SIZE = 12;
export const TOP_APPS = 20;

export interface StatsContext {
  reader: StatsReader;
  /** The privacy threshold: distinct accounts a name needs in the window to be shown. */
  minAccounts: number;
  now: Date;
  /** Blurs each published figure; exact without it. */
  noise?: StatsNoise;
}

const at = (w: Window) => w.from.toISOString();

/** Which names may be shown for a window; a threshold of 1 or less shows every name. */
async function visibleNames(c: StatsContext, dim: StatsDimension, w: Window): Promise<{ has(name: string): boolean }> {
  if (c.minAccounts <= 1) return { has: () => true };
  return c.reader.eligible(dim, w, c.minAccounts);
}

export async function modelsStats(c: StatsContext, period: Period): Promise<ModelsStats> {
  const { current } = periodWindows(period, c.now);
  const [rows, visible] = await Promise.all([c.reader.modelCalls(current), visibleNames(c, "model", current)]);
  const n = c.noise ?? EXACT;
  const total = n.blur(
    rows.reduce((a, r) => a + r.calls, 0),
    CALL_NOISE,
    "models.total",
    period,
    at(current),
  );
  const top = topBy(
    rows
      .filter((r) => r.calls > 0 && visible.has(r.model))
      .map((r) => ({
        model: r.model,
        calls: n.blur(r.calls, CALL_NOISE, "models.calls", r.model, period, at(current)),
      })),
    TOP_MODELS,
    (r) => r.calls,
    (r) => r.model,
  );
  return {
    period,
    generated_at: c.now.toISOString(),
    total_calls: total,
    top_models: top.map((r) => ({ model: r.model, calls: r.calls })),
  };
}

interface ModelTotal {
  model: string;
  tokens: number;
  calls: number;
  /** Tokens per provider and the maker seen with most tokens. */
  byProvider: Map<string, number>;
  maker: string;
  makerTokens: number;
}

export async function rankings(c: StatsContext, period: Period): Promise<Rankings> {
  const { current, previous } = periodWindows(period, c.now);
  const [cur, prev, visible] = await Promise.all([
    c.reader.modelTokens(current),
    c.reader.modelTokens(previous),
    visibleNames(c, "model", current),
  ]);

  const models = new Map<string, ModelTotal>();
  const providers = new Map<string, number>();
  let totalTokens = 0;
  for (const r of cur) {
    totalTokens += r.tokens;
    let m = models.get(r.model);
    if (!m)
      models.set(
        r.model,
        (m = { model: r.model, tokens: 0, calls: 0, byProvider: new Map(), maker: "", makerTokens: -1 }),
      );
    m.tokens += r.tokens;
    m.calls += r.calls;
    if (r.provider) {
      m.byProvider.set(r.provider, (m.byProvider.get(r.provider) ?? 0) + r.tokens);
      providers.set(r.provider, (providers.get(r.provider) ?? 0) + r.tokens);
    }
    if (r.maker && r.tokens > m.makerTokens) {
      m.maker = r.maker;
      m.makerTokens = r.tokens;
    }
  }
  const before = new Map<string, number>();
  for (const r of prev) before.set(r.model, (before.get(r.model) ?? 0) + r.tokens);
  const n = c.noise ?? EXACT;
  for (const m of models.values()) {
    m.tokens = n.blur(m.tokens, TOKEN_NOISE, "rankings.tokens", m.model, period, at(current));
    m.calls = n.blur(m.calls, CALL_NOISE, "rankings.calls", m.model, period, at(current));
  }
  for (const [m, t] of before) before.set(m, n.blur(t, TOKEN_NOISE, "rankings.tokens", m, period, at(previous)));
  for (const [p, t] of providers) providers.set(p, n.blur(t, TOKEN_NOISE, "rankings.provider", p, period, at(current)));
  totalTokens = n.blur(totalTokens, TOKEN_NOISE, "rankings.total", period, at(current));

  const board = topBy(
    [...models.values()].filter((m) => m.tokens > 0 && visible.has(m.model)),
    LEADERBOARD_SIZE,
    (m) => m.tokens,
    (m) => m.model,
    (m) => m.calls,
  );
  const leaderboard = board.map((m, i) => {
    const [provider] = topBy(
      m.byProvider.entries(),
      1,
      ([, t]) => t,
      ([p]) => p,
    );
    return {
      rank: i + 1,
      model: m.model,
      provider: provider?.[0] ?? null,
      maker: m.maker || null,
      tokens: m.tokens,
      calls: m.calls,
      trend_pct: trendPct(m.tokens, before.get(m.model)),
    };
  });

  const share = topBy(
    [...providers.entries()].filter(([, t]) => t > 0),
    MARKET_SHARE_SIZE,
    ([, t]) => t,
    ([p]) => p,
  );
  const shareTotal = share.reduce((a, [, t]) => a + t, 0);
  return {
    period,
    generated_at: c.now.toISOString(),
    total_tokens: totalTokens,
    leaderboard,
    market_share: share.map(([provider, tokens]) => ({ provider, tokens, share_pct: sharePct(tokens, shareTotal) })),
  };
}

export async function usageTimeseries(
  c: StatsContext,
  q: { range: Range; granularity: Granularity; top: number },
): Promise<UsageTimeseries> {
  const { buckets, window } = seriesBuckets(q.range, q.granularity, c.now);
  const [rows, visible] = await Promise.all([
    c.reader.textTokenSeries(window, q.granularity),
    visibleNames(c, "model", window),
  ]);

  const n = c.noise ?? EXACT;
  const label = [q.range, q.granularity, at(window)];
  const perModel = new Map<string, number>();
  for (const r of rows) perModel.set(r.model, (perModel.get(r.model) ?? 0) + r.tokens);
  // The top is chosen on blurred sums too: an exact order would let added usage probe them.
  for (const [m, t] of perModel) perModel.set(m, n.blur(t, TOKEN_NOISE, "series.sum", m, ...label));
  const top = topBy(
    [...perModel.entries()].filter(([m, t]) => t > 0 && visible.has(m)),
    q.top,
    ([, t]) => t,
    ([m]) => m,
  ).map(([m]) => m);
  const named = new Set(top);
  const hasOthers = [...perModel.entries()].some(([m, t]) => t > 0 && !named.has(m));
  const series = hasOthers ? [...top, OTHERS] : top;

  const index = new Map(buckets.map((b, i) => [b.getTime(), i]));
  const cells = buckets.map(() => Object.fromEntries(series.map((s) => [s, 0])) as Record<string, number>);
  for (const r of rows) {
    const i = index.get(r.t.getTime());
    if (i === undefined || r.tokens === 0) continue; // outside the buckets: cannot happen with whole-bucket windows
    const s = named.has(r.model) ? r.model : OTHERS;
    cells[i]![s]! += r.tokens;
  }
  let totalTokens = 0;
  const points = buckets.map((b, i) => {
    const tokens = cells[i]!;
    for (const s of series) tokens[s] = n.blur(tokens[s]!, TOKEN_NOISE, "series.cell", s, isoDate(b), ...label);
    const total = series.reduce((a, s) => a + tokens[s]!, 0);
    totalTokens += total;
    return { t: isoDate(b), tokens, total };
  });
  return {
    range: q.range,
    granularity: q.granularity,
    generated_at: c.now.toISOString(),
    series,
    points,
    total_tokens: totalTokens,
  };
}

export async function appsStats(c: StatsContext, period: Period): Promise<AppsStats> {
  const { current } = periodWindows(period, c.now);
  const [rows, visible] = await Promise.all([c.reader.appTokens(current), visibleNames(c, "app", current)]);
  const n = c.noise ?? EXACT;
  const total = n.blur(
    rows.reduce((a, r) => a + r.tokens, 0),
    TOKEN_NOISE,
    "apps.total",
    period,
    at(current),
  );
  const top = topBy(
    rows
      .filter((r) => r.tokens > 0 && visible.has(r.app))
      .map((r) => ({
        app: r.app,
        tokens: n.blur(r.tokens, TOKEN_NOISE, "apps.tokens", r.app, period, at(current)),
        calls: n.blur(r.calls, CALL_NOISE, "apps.calls", r.app, period, at(current)),
      })),
    TOP_APPS,
    (r) => r.tokens,
    (r) => r.app,
    (r) => r.calls,
  );
  return {
    period,
    generated_at: c.now.toISOString(),
    total_tokens: total,
    apps: top.map((r, i) => ({ rank: i + 1, app: r.app, tokens: r.tokens, calls: r.calls })),
  };
}

export interface StatsServiceOptions {
  reader: StatsReader;
  minAccounts: number;
  noise?: StatsNoise;
  /** How long a computed body is served again while the rollups have not changed. */
  ttlMs: number;
  now?: () => Date;
}

/**
 * The use-cases behind a per-process cache. A body is reused while the rollups' version and
 * the current hour are unchanged and it is younger than `ttlMs`, so a burst of identical
 * requests costs one small version read each instead of a scan of the rollups.
 */
export class StatsService {
  private memo = new Map<string, { version: number; hour: number; at: number; body: unknown }>();
  constructor(private options: StatsServiceOptions) {}

  models(period: Period): Promise<ModelsStats> {
    return this.cached(`models:${period}`, (c) => modelsStats(c, period));
  }

  rankings(period: Period): Promise<Rankings> {
    return this.cached(`rankings:${period}`, (c) => rankings(c, period));
  }

  timeseries(q: { range: Range; granularity: Granularity; top: number }): Promise<UsageTimeseries> {
    return this.cached(`series:${q.range}:${q.granularity}:${q.top}`, (c) => usageTimeseries(c, q));
  }

  apps(period: Period): Promise<AppsStats> {
    return this.cached(`apps:${period}`, (c) => appsStats(c, period));
  }

  private async cached<T>(key: string, compute: (c: StatsContext) => Promise<T>): Promise<T> {
    const now = this.options.now?.() ?? new Date();
    const hour = Math.floor(now.getTime() / HOUR_MS);
    const version = await this.options.reader.version();
    const hit = this.memo.get(key);
    if (hit && hit.version === version && hit.hour === hour && now.getTime() - hit.at < this.options.ttlMs)
      return hit.body as T;
    const body = await compute({
      reader: this.options.reader,
      minAccounts: this.options.minAccounts,
      now,
      noise: this.options.noise,
    });
    this.memo.set(key, { version, hour, at: now.getTime(), body });
    return body;
  }
}
