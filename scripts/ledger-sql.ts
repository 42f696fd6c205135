/**
 * Writes docs/ledger-functions.sql: every SQL function of the schema (the ledger's gw_*
 * steps), its triggers, and the tables those functions read or write, as the drizzle/
 * migrations leave them. Several migrations re-create the same functions, so reading the
 * migrations means replaying them; this file is the replayed result.
 *
 * The schema comes from migrating an in-memory PGlite with the gateway's own migrator, so the
 * output depends only on the committed migrations and the pinned PGlite build (a PostgreSQL
 * server of another version could print the same definitions slightly differently).
 * test/db/ledger-sql.test.ts regenerates it and fails when the committed file is stale.
 *
 *   ./node_modules/.bin/bun scripts/ledger-sql.ts    (npm run docs:ledger-sql)
 */
import { join } from "node:path";
import { openDatabase, type Database } from "../src/db/client";
import { runMigrations } from "../src/db/migrate";

export const LEDGER_SQL_PATH = join(import.meta.dir, "../docs/ledger-functions.sql");

const HEADER = `-- GENERATED FILE, do not edit: the SQL functions, triggers and ledger tables that the
-- drizzle/ migrations leave in the schema, replayed on PGlite and read back from the catalog.
-- Regenerate after changing a migration:
--   npm run docs:ledger-sql    (./node_modules/.bin/bun scripts/ledger-sql.ts)
-- test/db/ledger-sql.test.ts fails while this file differs from the migrations.
`;

interface FunctionRow {
  name: string;
  definition: string;
}

/** Functions and procedures of the public schema, overloads ordered by their argument lists. */
function functionsOf(db: Database): Promise<FunctionRow[]> {
  return db.query<FunctionRow>(
    `select p.proname as name, pg_get_functiondef(p.oid) as definition
       from pg_proc p
       join pg_namespace n on n.oid = p.pronamespace
      where n.nspname = 'public' and p.prokind in ('f', 'p')
        and not exists (select 1 from pg_depend d where d.objid = p.oid and d.deptype = 'e')
      order by p.proname, pg_get_function_identity_arguments(p.oid)`,
  );
}

/** User-defined triggers on the public schema's tables. */
async function triggersOf(db: Database): Promise<string[]> {
  const rows = await db.query<{ definition: string }>(
    `select pg_get_triggerdef(t.oid, true) as definition
       from pg_trigger t
       join pg_class c on c.oid = t.tgrelid
       join pg_namespace n on n.oid = c.relnamespace
      where n.nspname = 'public' and not t.tgisinternal
      order by c.relname, t.tgname`,
  );
  return rows.map((row) => `${row.definition};\n`);
}

/** CREATE TABLE with columns, constraints and the indexes that no constraint makes. */
async function tableDefinition(db: Database, table: string): Promise<string> {
  const columns = await db.query<{ line: string }>(
    `select format('%I %s%s%s', a.attname, format_type(a.atttypid, a.atttypmod),
                   case when a.attnotnull then ' NOT NULL' else '' end,
                   coalesce(' DEFAULT ' || pg_get_expr(d.adbin, d.adrelid), '')) as line
       from pg_attribute a
       left join pg_attrdef d on d.adrelid = a.attrelid and d.adnum = a.attnum
      where a.attrelid = $1::regclass and a.attnum > 0 and not a.attisdropped
      order by a.attnum`,
    [`public.${table}`],
  );
  const constraints = await db.query<{ line: string }>(
    `select format('CONSTRAINT %I %s', conname, pg_get_constraintdef(oid, true)) as line
       from pg_constraint
      where conrelid = $1::regclass and contype <> 'n'
      order by array_position(array['p', 'u', 'f', 'c', 'x'], contype::text), conname`,
    [`public.${table}`],
  );
  const indexes = await db.query<{ line: string }>(
    `select pg_get_indexdef(i.indexrelid) as line
       from pg_index i
       join pg_class ic on ic.oid = i.indexrelid
      where i.indrelid = $1::regclass
        and not exists (select 1 from pg_constraint c where c.conindid = i.indexrelid)
      order by ic.relname`,
    [`public.${table}`],
  );
  const body = [...columns, ...constraints].map((row) => `  ${row.line}`).join(",\n");
  // A partitioned table says its key (its partitions, made by gw_usage_upkeep, are not listed).
  const [shape] = await db.query<{ key: string }>(
    "select coalesce(' PARTITION BY ' || pg_get_partkeydef($1::regclass), '') as key",
    [`public.${table}`],
  );
  return `CREATE TABLE public.${table} (\n${body}\n)${shape?.key ?? ""};\n${indexes.map((row) => `${row.line};\n`).join("")}`;
}

/** Public tables a function body reads or writes (FROM, JOIN, INTO, UPDATE): the ledger's tables. */
async function tablesUsedBy(db: Database, functions: FunctionRow[]): Promise<string[]> {
  const tables = await db.query<{ name: string }>(
    `select c.relname as name from pg_class c join pg_namespace n on n.oid = c.relnamespace
      where n.nspname = 'public' and c.relkind in ('r', 'p') and not c.relispartition order by c.relname`,
  );
  const bodies = functions.map((fn) => fn.definition).join("\n");
  const used = (name: string) => new RegExp(`\\b(from|join|into|update)\\s+${name}\\b`, "i").test(bodies);
  return tables.map((table) => table.name).filter(used);
}

/** The generated file's text, from a freshly migrated in-memory PGlite. */
export async function ledgerSql(): Promise<string> {
  const db = await openDatabase({});
  try {
    await runMigrations(db);
    const functions = await functionsOf(db);
    const triggers = await triggersOf(db);
    const tables = await tablesUsedBy(db, functions);
    const sections = [HEADER];
    sections.push(`-- ${functions.length} functions, by name\n`);
    for (const fn of functions) sections.push(`${fn.definition.trimEnd()};\n`);
    sections.push(triggers.length > 0 ? `-- Triggers\n\n${triggers.join("\n")}` : "-- Triggers: none\n");
    sections.push(`-- Tables the functions read or write: ${tables.join(", ")}\n`);
    for (const table of tables) sections.push(await tableDefinition(db, table));
    return sections.join("\n");
  } finally {
    await db.close();
  }
}

if (import.meta.main) {
  await Bun.write(LEDGER_SQL_PATH, await ledgerSql());
  console.log(`wrote ${LEDGER_SQL_PATH}`);
}
