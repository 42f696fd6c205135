/**
 * What the database server itself charges for one statement at the open loop's pace: the floor
 * under the settle before the answer. Three kinds take turns, one statement per tick of
 * 1000 / rate ms on one postgres.js connection: `select 1` (a round trip), a one-row insert
 * committed durably (a round trip, a WAL flush) and the same with `synchronous_commit = off`.
 * Paced, not back to back: on an idle moment the server's backend and this process wake from
 * their sleep for each statement, as they do for the gateway's charge at 200 req/s, and on a
 * shared VM that wake-up is most of the cost (docs/decisions.md #56).
 */
import postgres from "postgres";
import { dist, type Dist } from "./summary";

export interface PgFloor {
  rate: number;
  perKind: number;
  select1: Dist;
  insertDurable: Dist;
  insertAsync: Dist;
}

export async function pgFloor(url: string, rate: number, perKind = 300): Promise<PgFloor> {
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  const table = `bench_floor_${process.pid}`;
  try {
    await sql.unsafe(`create table ${table} (id bigserial primary key, v text not null)`);
    const kinds: [keyof Omit<PgFloor, "rate" | "perKind">, () => Promise<unknown>][] = [
      ["select1", () => sql`select 1`],
      ["insertDurable", () => sql.unsafe(`insert into ${table} (v) values ('x')`)],
      [
        "insertAsync",
        () =>
          sql.unsafe(
            `with i as (insert into ${table} (v) values ('x') returning 1) select set_config('synchronous_commit', 'off', true), (select count(*) from i)`,
          ),
      ],
    ];
    const times: Record<string, number[]> = { select1: [], insertDurable: [], insertAsync: [] };
    const tick = 1000 / rate;
    for (let i = 0; i < 20; i++) for (const [, run] of kinds) await run(); // connection and plans warm
    for (let i = 0; i < perKind * kinds.length; i++) {
      const [name, run] = kinds[i % kinds.length]!;
      const t0 = performance.now();
      await run();
      times[name]!.push(performance.now() - t0);
      await Bun.sleep(tick);
    }
    return {
      rate,
      perKind,
      select1: dist(times.select1!),
      insertDurable: dist(times.insertDurable!),
      insertAsync: dist(times.insertAsync!),
    };
  } finally {
    await sql.unsafe(`drop table if exists ${table}`).catch(() => {});
    await sql.end();
  }
}
