/**
 * Everything one simulator instance remembers between requests: call statistics, prompt
 * caches, `xN` failure counters, and scratch space for protocols that keep state (video
 * tasks). Tests start several simulators in one process, so none of this is module-global;
 * `reset()` clears all of it.
 */

/** `GET /sim/stats` body: calls received, per provider and `"METHOD /path"` under its base URL. */
export interface SimStats {
  total: number;
  calls: Record<string, Record<string, number>>;
}

// A long benchmark with unique prompts would otherwise grow the caches without bound.
const MAX_CACHE_ENTRIES = 200_000;

export class SimState {
  private total = 0;
  private readonly calls = new Map<string, Map<string, number>>();
  private readonly failCounters = new Map<string, number>();
  private readonly cancels = new Map<string, number>();
  private readonly scratchSpace = new Map<string, unknown>();
  private idCounter = 0;
  /** Prompt-prefix hashes seen so far (automatic and explicit caching share one set). */
  readonly promptCache = new Set<bigint>();
  /** Wake-up callbacks of `[sim:hang]` requests, run on stop so nothing dangles. */
  readonly hangs = new Set<() => void>();

  /** Records one received call. */
  count(provider: string, route: string): void {
    this.total++;
    let byRoute = this.calls.get(provider);
    if (!byRoute) this.calls.set(provider, (byRoute = new Map()));
    byRoute.set(route, (byRoute.get(route) ?? 0) + 1);
  }

  stats(): SimStats {
    const calls: Record<string, Record<string, number>> = {};
    for (const [provider, byRoute] of this.calls) calls[provider] = Object.fromEntries(byRoute);
    return { total: this.total, calls };
  }

  /** A request whose client went away while it waited out its `latency`. */
  cancel(provider: string): void {
    this.cancels.set(provider, (this.cancels.get(provider) ?? 0) + 1);
  }

  /** Requests per provider whose client went away before their first byte. */
  cancelled(): Record<string, number> {
    return Object.fromEntries(this.cancels);
  }

  /** Increments and returns how many calls carried `key` so far (this one included). */
  bumpFailCounter(key: string): number {
    const n = (this.failCounters.get(key) ?? 0) + 1;
    this.failCounters.set(key, n);
    return n;
  }

  /** Remembers a prompt prefix hash; returns whether it had been seen before. */
  rememberPrefix(hash: bigint): boolean {
    if (this.promptCache.has(hash)) return true;
    if (this.promptCache.size >= MAX_CACHE_ENTRIES) this.promptCache.clear();
    this.promptCache.add(hash);
    return false;
  }

  /**
   * Per-instance state for a protocol (e.g. a video family's task table), created on first
   * use and dropped by `reset()`.
   */
  scratch<T>(name: string, init: () => T): T {
    let v = this.scratchSpace.get(name) as T | undefined;
    if (v === undefined) this.scratchSpace.set(name, (v = init()));
    return v;
  }

  /** A short unique id fragment (base 36) for response ids. */
  nextId(): string {
    return (++this.idCounter).toString(36).padStart(6, "0");
  }

  reset(): void {
    this.total = 0;
    this.calls.clear();
    this.failCounters.clear();
    this.cancels.clear();
    this.scratchSpace.clear();
    this.promptCache.clear();
  }
}
