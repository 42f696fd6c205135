/**
 * A small Prometheus registry: counters, gauges (read on scrape) and histograms with label
 * sets, rendered in the text exposition format. Label values are escaped; series are kept in
 * maps keyed by the label string so an observation is one map lookup.
 */

type Labels = Record<string, string | number>;

function labelKey(labels: Labels | undefined): string {
  if (!labels) return "";
  const parts = Object.keys(labels)
    .sort()
    .map((k) => `${k}="${String(labels[k]).replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n")}"`);
  return parts.length ? `{${parts.join(",")}}` : "";
}

interface Metric {
  render(): string;
}

export class Counter implements Metric {
  private series = new Map<string, number>();
  constructor(readonly name: string, readonly help: string) {}
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
  constructor(readonly name: string, readonly help: string, private read: () => number) {}
  render(): string {
    return [`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} gauge`, `${this.name} ${this.read()}`].join("\n");
  }
}

export class Histogram implements Metric {
  private series = new Map<string, { counts: number[]; sum: number; count: number; labels: Labels | undefined }>();
  constructor(readonly name: string, readonly help: string, readonly buckets: number[]) {}
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
      this.buckets.forEach((b, i) => lines.push(`${this.name}_bucket${labelKey({ ...s.labels, le: b })} ${s.counts[i]}`));
      lines.push(`${this.name}_bucket${labelKey({ ...s.labels, le: "+Inf" })} ${s.count}`);
      lines.push(`${this.name}_sum${labelKey(s.labels)} ${s.sum}`);
      lines.push(`${this.name}_count${labelKey(s.labels)} ${s.count}`);
    }
    return lines.join("\n");
  }
}

export class Registry {
  private metrics: Metric[] = [];
  add<M extends Metric>(m: M): M {
    this.metrics.push(m);
    return m;
  }
  render(): string {
    return this.metrics.map((m) => m.render()).join("\n") + "\n";
  }
}
