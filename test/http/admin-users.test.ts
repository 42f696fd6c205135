/** GET /v1/admin/users: the operator lists and searches accounts, page by page. */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from "bun:test";
import { ADMIN_TOKEN, dbKinds, startTestGateway, type TestGateway } from "../harness";
import { fastUser } from "../support/http";

setDefaultTimeout(30_000);

for (const kind of await dbKinds()) {
  describe(`admin user list on ${kind}`, () => {
    let g: TestGateway;
    beforeAll(async () => {
      g = await startTestGateway({ db: kind });
    }, 60_000);
    afterAll(async () => {
      await g?.stop();
    });

    test("only the admin token lists accounts; secrets never appear", async () => {
      const u = await fastUser(g);
      for (const token of [undefined, "wrong-token", ADMIN_TOKEN + "x", u.jwt]) {
        expect((await g.call("GET", "/v1/admin/users", { token })).status).toBe(401);
      }
      const r = await g.admin("GET", `/v1/admin/users?q=${encodeURIComponent(u.email)}`);
      expect(r.status).toBe(200);
      expect(JSON.stringify(r.body)).not.toContain("argon2");
      expect(Object.keys(r.body.data[0]).sort()).toEqual(
        [
          "balance_krw",
          "created_at",
          "deleted",
          "deleted_at",
          "email",
          "held_krw",
          "industry",
          "regulated",
          "user_id",
          "xborder_training_consent",
        ].sort(),
      );
    });

    test("search by part of the email or the id shows balance and flags", async () => {
      const tag = `find${crypto.randomUUID().slice(0, 8)}`;
      const a = await fastUser(g);
      const b = await fastUser(g);
      // Emails are random: give two accounts the tag through their email by searching it as a case-insensitive fragment.
      await g.gw.deps.db.query("update users set email = $1 where id = $2", [
        `Alice.${tag}@Example.com`.toLowerCase(),
        a.id,
      ]);
      await g.gw.deps.db.query("update users set email = $1 where id = $2", [`bob.${tag}@example.com`, b.id]);
      // Two sign-ups may share a clock tick (PGlite's clock is coarse): make b the newer one.
      await g.gw.deps.db.query("update users set created_at = created_at - interval '1 second' where id = $1", [a.id]);
      await g.credit(a.id, 1234);
      await g.admin("PATCH", `/v1/admin/users/${b.id}`, { regulated: true, deleted: true });

      const all = await g.admin("GET", `/v1/admin/users?q=${tag.toUpperCase()}`);
      expect(all.status).toBe(200);
      expect(all.body.total).toBe(2);
      // Newest first.
      expect(all.body.data.map((x: any) => x.user_id)).toEqual([b.id, a.id]);
      expect(all.body.data[1]).toMatchObject({ balance_krw: 1234, held_krw: 0, deleted: false, regulated: false });
      expect(all.body.data[0]).toMatchObject({ deleted: true, regulated: true });
      expect(all.body.has_more).toBe(false);
      expect(all.body.next_cursor).toBeNull();

      const live = await g.admin("GET", `/v1/admin/users?q=${tag}&deleted=false`);
      expect(live.body.data.map((x: any) => x.user_id)).toEqual([a.id]);
      const gone = await g.admin("GET", `/v1/admin/users?q=${tag}&deleted=true`);
      expect(gone.body.data.map((x: any) => x.user_id)).toEqual([b.id]);

      const byId = await g.admin("GET", `/v1/admin/users?q=${a.id.toUpperCase()}`);
      expect(byId.body.data.map((x: any) => x.user_id)).toEqual([a.id]);
      // LIKE wildcards in the search are literal: "%" does not match everything.
      const wild = await g.admin("GET", `/v1/admin/users?q=${encodeURIComponent("%")}`);
      expect(wild.body.total).toBe(0);
    });

    test("pages follow the cursor without gaps or repeats, while accounts are added", async () => {
      const tag = `page${crypto.randomUUID().slice(0, 8)}`;
      const ids: string[] = [];
      for (let i = 0; i < 7; i++) {
        const u = await fastUser(g);
        await g.gw.deps.db.query("update users set email = $1 where id = $2", [`${tag}-${i}@example.com`, u.id]);
        ids.push(u.id);
      }
      const seen: string[] = [];
      let cursor: string | null = null;
      let pages = 0;
      do {
        const r: any = await g.admin("GET", `/v1/admin/users?q=${tag}&limit=3${cursor ? `&cursor=${cursor}` : ""}`);
        expect(r.status).toBe(200);
        expect(r.body.total).toBe(7 + (pages > 0 ? 1 : 0));
        seen.push(...r.body.data.map((x: any) => x.user_id));
        cursor = r.body.next_cursor;
        expect(r.body.has_more).toBe(cursor !== null);
        if (pages++ === 0) {
          // A newer account arrives after the first page: it is not on the later pages.
          const late = await fastUser(g);
          await g.gw.deps.db.query("update users set email = $1 where id = $2", [`${tag}-late@example.com`, late.id]);
        }
      } while (cursor);
      expect(pages).toBe(3);
      // Every account once, in the list's order (newest first; equal creation times by id,
      // which PGlite's coarser clock makes common), and not the late one.
      const order = await g.gw.deps.db.query<{ id: string }>(
        "select id from users where email like $1 and email not like '%-late@%' order by created_at desc, id desc",
        [`${tag}-%`],
      );
      expect(seen).toEqual(order.map((r) => r.id));
      expect([...seen].sort()).toEqual([...ids].sort());
    });

    test("bad query values are 422 naming each field", async () => {
      const r = await g.admin("GET", "/v1/admin/users?limit=0&deleted=yes&cursor=abc");
      expect(r.status).toBe(422);
      expect(r.body.detail.map((i: any) => i.loc.join("."))).toEqual(["query.deleted", "query.limit", "query.cursor"]);
      for (const q of ["limit=201", "limit=1.5", "limit=-1", "limit=2&limit=3", `q=${"x".repeat(321)}`]) {
        expect([q, (await g.admin("GET", `/v1/admin/users?${q}`)).status]).toEqual([q, 422]);
      }
      expect((await g.admin("GET", "/v1/admin/users?limit=200")).status).toBe(200);
    });
  });
}
