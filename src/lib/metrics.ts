/**
 * A small Prometheus registry: counters, gauges (read on scrape) and histograms with label
 * sets, rendered in the text exposition format. Label values are escaped; series are kept in
 * maps keyed by the label string so an observation is one map lookup.
 */

type Labels = Record<string, string | number>;

const NEEDS_ESCAPE = /[\\"\n]/;

function escapeValue(value: string | number): string {
  const s = String(value);
  return NEEDS_ESCAPE.test(s) ? s.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n") : s;
}

/** The series key, labels sorted by name and escaped. */
function renderKey(labels: Labels): string {
  const keys = Object.keys(labels);
  if (!keys.length) return "";
  if (keys.length > 1) keys.sort();
  let key = "{";
  for (let i = 0; i < keys.length; i++) key += `${i ? "," : ""}${keys[i]}="${escapeValue(labels[keys[i]!]!)}"`;
  return `${key}}`;
}

/**
 * Series keys already rendered, found by walking the labels' names and values in the order the
 * caller wrote them: a call makes about eight observations, each with a fresh labels object, and
 * rendering each key anew cost arrays, a sort and strings on every one. The tree holds one leaf
 * per label set ever observed, as the metrics themselves hold one series each.
 */
interface KeyNode {
  next: Map<string, Map<string | number, KeyNode>>;
  key: string | undefined;
}
const keyTree: KeyNode = { next: new Map(), key: undefined };

function labelKey(labels: Labels | undefined): string {
  if (!labels) return "";
  let node = keyTree;
  for (const name in labels) {
    const value = labels[name]!;
    let byValue = node.next.get(name);
    if (!byValue) node.next.set(name, (byValue = new Map()));
    let child = byValue.get(value);
    if (!child) byValue.set(value, (child = { next: new Map(), key: undefined }));
    node = child;
  }
  return (node.key ??= renderKey(labels));
}

interface Metric {
  render(): string;
}

export class Counter implements Metric {
  private series = new Map<string, number>();
  constructor(
    readonly name: string,
    readonly help: string,
  ) {}
  inc(labels?: Labels, by = 1): void {
    const k = labelKey(labels);
    this.series.set(k, (this.series.get(k) ?? 0) + by);
  }
  get(labels?: Labels): number {
    return this.series.get(labelKey(labels)) ?? 0;
  }
  render(): string {
    const lines = [`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} counter`];
    for (const [k, v] of this.series) lines.push(`${this.name}${k} ${v}`);
    return lines.join("\n");
  }
}

export class Gauge implements Metric {
  constructor(
    readonly name: string,
    readonly help: string,
    private read: () => number,
  ) {}
  render(): string {
    return [`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} gauge`, `${this.name} ${this.read()}`].join("\n");
  }
}

/** A gauge with label sets, whose rows are replaced as a whole by a collector before a scrape. */
export class GaugeSet implements Metric {
  private rows: { labels: Labels; value: number }[] = [];
  constructor(
    readonly name: string,
    readonly help: string,
  ) {}
  replace(rows: { labels: Labels; value: number }[]): void {
    this.rows = rows;
  }
  render(): string {
    const lines = [`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} gauge`];
    for (const r of this.rows) lines.push(`${this.name}${labelKey(r.labels)} ${r.value}`);
    return lines.join("\n");
  }
}

/** A counter whose value is read on scrape (a total kept elsewhere, e.g. the process's CPU time). */
export class CounterFn implements Metric {
  constructor(
    readonly name: string,
    readonly help: string,
    private read: () => number,
  ) {}
  render(): string {
    return [`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} counter`, `${this.name} ${this.read()}`].join(
      "\n",
    );
  }
}

export class Histogram implements Metric {
  private series = new Map<string, { counts: number[]; sum: number; count: number; labels: Labels | undefined }>();
  constructor(
    readonly name: string,
    readonly help: string,
    readonly buckets: number[],
  ) {}
  observe(value: number, labels?: Labels): void {
    const k = labelKey(labels);
    let s = this.series.get(k);
    if (!s) this.series.set(k, (s = { counts: new Array(this.buckets.length).fill(0), sum: 0, count: 0, labels }));
    for (let i = 0; i < this.buckets.length; i++) if (value <= this.buckets[i]!) s.counts[i]!++;
    s.sum += value;
    s.count++;
  }
  render(): string {
    const lines = [`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} histogram`];
    for (const s of this.series.values()) {
      this.buckets.forEach((b, i) =>
        lines.push(`${this.name}_bucket${labelKey({ ...s.labels, le: b })} ${s.counts[i]}`),
      );
      lines.push(`${this.name}_bucket${labelKey({ ...s.labels, le: "+Inf" })} ${s.count}`);
      lines.push(`${this.name}_sum${labelKey(s.labels)} ${s.sum}`);
      lines.push(`${this.name}_count${labelKey(s.labels)} ${s.count}`);
    }
    return lines.join("\n");
  }
}

/** Refreshes values that cost a query (database counts) before a scrape renders them. */
export type Collector = () => Promise<void>;

export class Registry {
  private metrics: Metric[] = [];
  private collectors: Collector[] = [];
  private collected: Promise<void> | null = null;
  private collectedAt = 0;
  /** Collected values are reused for this long, so frequent or parallel scrapes cost one query. */
  constructor(private collectEveryMs = 5000) {}
  collect(c: Collector): void {
    this.collectors.push(c);
  }
  /** Runs the collectors (at most once per `collectEveryMs` unless forced; a failing one keeps its last rows). */
  async refresh(opts: { force?: boolean } = {}): Promise<void> {
    const now = Date.now();
    if (!this.collected || opts.force || now - this.collectedAt >= this.collectEveryMs) {
      this.collectedAt = now;
      // A slow database must not hold the scrape: past a second it renders the last values.
      const all = Promise.allSettled(this.collectors.map((c) => c())).then(() => {});
      this.collected = Promise.race([all, Bun.sleep(1000)]);
    }
    await this.collected;
  }
  add<M extends Metric>(m: M): M {
    this.metrics.push(m);
    return m;
  }
  render(): string {
    return this.metrics.map((m) => m.render()).join("\n") + "\n";
  }
}
