/**
 * The stats rollup's lag, sampled while a load runs: every `everyMs`, how many usage events lie
 * above the rollup's watermark and how old the oldest of them is (docs/scaling.md, "Figures").
 */
import type postgres from "postgres";
import { quantile } from "./summary";

export interface RollupLag {
  samples: number;
  events: { p50: number; max: number };
  seconds: { p50: number; max: number };
}

export function sampleRollupLag(sql: postgres.Sql, everyMs = 500): { stop(): Promise<RollupLag> } {
  const events: number[] = [];
  const seconds: number[] = [];
  let sampling = true;
  const loop = (async () => {
    while (sampling) {
      const [r] = await sql`select (select coalesce(max(id), 0) from usage_events) - s.watermark as behind,
          coalesce(extract(epoch from now() - (select min(created_at) from usage_events e where e.id > s.watermark)), 0) as age
        from stats_rollup_state s where s.id = 1`;
      if (r) {
        events.push(Number(r.behind));
        seconds.push(Number(r.age));
      }
      await Bun.sleep(everyMs);
    }
  })();
  const sorted = (xs: number[]) => [...xs].sort((a, b) => a - b);
  const stat = (xs: number[]) => ({ p50: xs.length ? quantile(sorted(xs), 0.5) : NaN, max: Math.max(0, ...xs) });
  return {
    async stop() {
      sampling = false;
      await loop;
      return { samples: events.length, events: stat(events), seconds: stat(seconds) };
    },
  };
}
