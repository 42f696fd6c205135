/**
 * Migration 0022_stored_response_scope on a database holding stored responses from before it:
 * each row gets the key of its call's usage event, its context moves to
 * stored_response_contexts (one row per account and content), its bytes are counted, and a row
 * whose key cannot be traced (its client named the request id) is deleted with its items.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { migrate } from "drizzle-orm/pglite/migrator";
import { openDatabase } from "../../src/db/client";
import { migrationsFolder } from "../../src/db/migrate";
import { migrationsBefore, removeMigrationCopies } from "../support/migrations";

afterAll(removeMigrationCopies);

describe("migration 0022_stored_response_scope", () => {
  test("keys rows from their usage events, moves contexts once, deletes untraceable rows", async () => {
    const db = await openDatabase({});
    await migrate(db.orm as never, { migrationsFolder: migrationsBefore("0022_stored_response_scope") });
    const user = "11111111-1111-4111-8111-111111111111";
    const key = "22222222-2222-4222-8222-222222222222";
    await db.query("insert into users (id, email, password_hash) values ($1, 'a@example.com', 'x')", [user]);
    const rid = (n: number) => `0f35ed53-1603-4953-a169-3cc95782988${n}`;
    for (const n of [1, 2])
      await db.query(
        "insert into usage_events (request_id, user_id, key_id, model, status) values ($1, $2, $3, 'gpt-4o-mini', 200)",
        [rid(n), user, key],
      );
    const ctx = JSON.stringify([{ role: "user", content: "same question" }]);
    const resp = (n: number) => JSON.stringify({ id: `r${n}`, output: [{ id: `msg_${n}`, type: "message" }] });
    for (const [id, n] of [
      [`resp_${rid(1).replaceAll("-", "")}`, 1],
      [`resp_${rid(2).replaceAll("-", "")}`, 2],
      ["resp_99999999999999999999999999999999", 3],
    ] as const) {
      await db.query(
        `insert into stored_responses (user_id, id, response, context, expires_at) values ($1, $2, $3::jsonb, $4::jsonb, now() + interval '${n} days')`,
        [user, id, resp(n), ctx],
      );
      await db.query(
        "insert into stored_response_items (user_id, id, response_id, item) values ($1, $2, $3, '{}'::jsonb)",
        [user, `msg_${n}`, id],
      );
    }

    await migrate(db.orm as never, { migrationsFolder: migrationsFolder() });
    const rows = await db.query<any>(
      "select id, key_id, context_hash, bytes from stored_responses where user_id = $1 order by id",
      [user],
    );
    expect(rows.map((r) => r.key_id)).toEqual([key, key]);
    expect(rows.every((r) => r.bytes > 0 && r.context_hash === rows[0].context_hash)).toBe(true);
    const contexts = await db.query<any>(
      `select context, bytes, expires_at = (select max(expires_at) from stored_responses where user_id = $1) as lasts
         from stored_response_contexts where user_id = $1`,
      [user],
    );
    expect(contexts).toHaveLength(1);
    expect(contexts[0].context).toEqual(JSON.parse(ctx));
    expect(contexts[0].lasts).toBe(true); // as long as the longer-lived of the rows naming it
    expect(await db.query("select id from stored_response_items order by id")).toEqual([
      { id: "msg_1" },
      { id: "msg_2" },
    ]);
    await db.close();
  }, 60_000);
});
