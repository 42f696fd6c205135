/**
 * Loads the benchmark table of the `auto` policy (`benchmarks.json`, beside this file and apart
 * from the verified catalog, so editing scores never touches the catalog's hash). Embedded
 * in a compiled binary like the catalog. A table that fails its schema is replaced by an empty
 * one (auto then keeps entry order) and the problems are returned for the boot log.
 */
import { verifyBenchmarks, type BenchmarkTable } from "./benchmarks";
import shipped from "./benchmarks.json" with { type: "json" };

export function loadBenchmarks(data: unknown = shipped): { table: BenchmarkTable; problems: string[] } {
  const v = verifyBenchmarks(data);
  return v.ok ? { table: v.table, problems: [] } : { table: { version: 1, scores: {} }, problems: v.problems };
}
