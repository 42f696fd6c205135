/**
 * Operator top-ups take an Idempotency-Key (issue 28): a retry with the same key answers the
 * first top-up again and credits nothing; the same key with another account or amount is 422
 * `idempotency_key_reused`; two concurrent top-ups with one key credit once. The books are read
 * in SQL (balance and ledger entries), on PostgreSQL and PGlite.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { ADMIN_TOKEN, dbKinds, startTestGateway, type TestGateway } from "../harness";
import { fastUser } from "../support/http";

for (const kind of await dbKinds()) {
  describe(`top-ups with an Idempotency-Key on ${kind}`, () => {
    let g: TestGateway;
    beforeAll(async () => {
      g = await startTestGateway({ db: kind, env: { VIDEO_POLL_WORKERS: "0" } });
    }, 60_000);
    afterAll(() => g?.stop());

    const topup = (userId: string, amount: number, key?: string) =>
      g.call("POST", `/v1/admin/users/${userId}/topups`, {
        token: ADMIN_TOKEN,
        body: { amount_krw: amount },
        headers: key ? { "idempotency-key": key } : {},
      });
    const books = async (userId: string) => {
      const [u] = await g.gw.deps.db.query<{ b: string }>("select balance_micro::text as b from users where id = $1", [
        userId,
      ]);
      const [l] = await g.gw.deps.db.query<{ n: number; sum: string }>(
        "select count(*)::int as n, coalesce(sum(amount_micro), 0)::text as sum from ledger_entries where user_id = $1 and kind = 'topup'",
        [userId],
      );
      return { balanceMicro: BigInt(u!.b), entries: l!.n, creditedMicro: BigInt(l!.sum) };
    };

    test("the same key twice: the first answer again, one credit in the ledger", async () => {
      const user = await fastUser(g);
      const key = crypto.randomUUID();
      const first = await topup(user.id, 10_000, key);
      expect(first.status).toBe(201);
      expect(first.body).toEqual({ paid_krw: 10_000, fee_krw: 300, credited_krw: 9_700, balance_krw: 9_700 });
      const again = await topup(user.id, 10_000, key);
      expect(again.status).toBe(201);
      expect(again.body).toEqual(first.body);
      expect(again.headers.get("idempotent-replayed")).toBe("true");
      expect(first.headers.get("idempotent-replayed")).toBeNull();
      expect(await books(user.id)).toEqual({ balanceMicro: 9_700_000_000n, entries: 1, creditedMicro: 9_700_000_000n });
      // A replay after another top-up still answers the first figures and credits nothing.
      expect((await topup(user.id, 1_000)).status).toBe(201);
      expect((await topup(user.id, 10_000, key)).body).toEqual(first.body);
      expect(await books(user.id)).toEqual({
        balanceMicro: 10_670_000_000n,
        entries: 2,
        creditedMicro: 10_670_000_000n,
      });
    });

    test("the same key with another amount or account is 422 idempotency_key_reused and credits nothing", async () => {
      const user = await fastUser(g);
      const other = await fastUser(g);
      const key = crypto.randomUUID();
      expect((await topup(user.id, 5_000, key)).status).toBe(201);
      for (const [id, amount] of [
        [user.id, 5_001],
        [other.id, 5_000],
      ] as const) {
        const r = await topup(id, amount, key);
        expect(r.status).toBe(422);
        expect(r.body.detail.error).toBe("idempotency_key_reused");
      }
      expect((await books(user.id)).entries).toBe(1);
      expect(await books(other.id)).toEqual({ balanceMicro: 0n, entries: 0, creditedMicro: 0n });
    });

    test("concurrent top-ups with one key credit once", async () => {
      const user = await fastUser(g);
      const key = crypto.randomUUID();
      const answers = await Promise.all(Array.from({ length: 8 }, () => topup(user.id, 20_000, key)));
      for (const a of answers) {
        expect(a.status).toBe(201);
        expect(a.body).toEqual({ paid_krw: 20_000, fee_krw: 600, credited_krw: 19_400, balance_krw: 19_400 });
      }
      expect(answers.filter((a) => a.headers.get("idempotent-replayed") === "true").length).toBe(7);
      expect(await books(user.id)).toEqual({
        balanceMicro: 19_400_000_000n,
        entries: 1,
        creditedMicro: 19_400_000_000n,
      });
    });

    test("without a key every top-up credits; an overlong key is 422", async () => {
      const user = await fastUser(g);
      await topup(user.id, 1_000);
      await topup(user.id, 1_000);
      expect((await books(user.id)).entries).toBe(2);
      const r = await topup(user.id, 1_000, "k".repeat(129));
      expect(r.status).toBe(422);
      expect((await books(user.id)).entries).toBe(2);
    });
  });
}
