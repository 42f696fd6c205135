/**
 * The benchmark table of `auto` (the `selected_smart` behaviour): a quality score per model
 * and intent category. `auto` ranks the policy's own entries by the score of the request's
 * category; entries without a score follow the scored ones in entry order.
 */
import { Type, type Static } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import { CATEGORIES, type Category } from "./classify";

const Scores = Type.Object(
  Object.fromEntries(CATEGORIES.map((c) => [c, Type.Optional(Type.Number({ minimum: 0, maximum: 100 }))])),
  {
    additionalProperties: false,
  },
);

export const BenchmarkTableSchema = Type.Object({
  version: Type.Literal(1),
  about: Type.Optional(Type.String()),
  scores: Type.Record(Type.String({ minLength: 1 }), Scores),
});

export type BenchmarkTable = Static<typeof BenchmarkTableSchema>;

/** Checks a parsed table; the problems are listed for the boot log. */
export function verifyBenchmarks(
  data: unknown,
): { ok: true; table: BenchmarkTable } | { ok: false; problems: string[] } {
  if (Value.Check(BenchmarkTableSchema, data)) return { ok: true, table: data };
  return {
    ok: false,
    problems: [...Value.Errors(BenchmarkTableSchema, data)].map((e) => `${e.path || "/"}: ${e.message}`),
  };
}

export function scoreOf(table: BenchmarkTable, model: string, category: Category): number | undefined {
  const base = model.includes("@") ? model.slice(0, model.lastIndexOf("@")) : model;
  return (table.scores[base] as Partial<Record<Category, number>> | undefined)?.[category];
}

/** Entry indexes by score for `category`, best first; unscored entries last, in entry order. */
export function rankByBenchmark(
  table: BenchmarkTable,
  models: readonly string[],
  category: Category,
): { order: number[]; topScore: number | null } {
  const scored = models.map((m, i) => ({ i, s: scoreOf(table, m, category) }));
  scored.sort((a, b) => (b.s ?? -1) - (a.s ?? -1) || a.i - b.i);
  return { order: scored.map((x) => x.i), topScore: scored[0]?.s ?? null };
}
