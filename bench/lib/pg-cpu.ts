/**
 * PostgreSQL CPU spent for one database: the user + system time of its own backends (from
 * /proc), so that other work on a shared server — other databases, other people's tests — does
 * not count. The server's shared processes (WAL writer, checkpointer) are left out too; on a
 * server of its own, `postgresMs()` (lib/procs.ts) counts everything instead.
 */
import { readFileSync } from "node:fs";
import postgres from "postgres";

export function databaseCpu(serverUrl: string, dbName: string) {
  const sql = postgres(serverUrl, { max: 1, onnotice: () => {} });
  return {
    async ms(): Promise<number> {
      const rows = await sql<{ pid: number }[]>`select pid from pg_stat_activity where datname = ${dbName}`;
      let ms = 0;
      for (const { pid } of rows) {
        try {
          const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
          const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
          ms += ((Number(f[11]) + Number(f[12])) * 1000) / 100; // utime, stime; USER_HZ is 100
        } catch {}
      }
      return ms;
    },
    end: () => sql.end({ timeout: 1 }),
  };
}
