/** Applies the committed drizzle/ migrations at start, on PostgreSQL and PGlite alike. */
import { migrate as migratePg } from "drizzle-orm/postgres-js/migrator";
import { migrate as migrateLite } from "drizzle-orm/pglite/migrator";
import { join } from "node:path";
import type { Database } from "./client";

/** drizzle/ next to the sources, or embedded in the single binary (`--asset ./drizzle`). */
export function migrationsFolder(): string {
  return Bun.isStandaloneExecutable ? join(import.meta.dir, "drizzle") : join(import.meta.dir, "../../drizzle");
}

export async function runMigrations(db: Database): Promise<void> {
  const folder = migrationsFolder();
  if (db.kind === "postgres") await migratePg(db.orm as never, { migrationsFolder: folder });
  else await migrateLite(db.orm as never, { migrationsFolder: folder });
}
