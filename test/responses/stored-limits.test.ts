/**
 * Issue 28 #8: stored responses cannot grow for free. With RESPONSES_STORE=on a response-cache
 * hit (free) repeating an input adds its answer only, not the input again; a response larger
 * than RESPONSES_STORE_MAX_RESPONSE_KB and any response past the account's
 * RESPONSES_STORE_ACCOUNT_MB are answered and charged as usual but not kept, and the answer
 * says so (`store: false`, `x-response-stored`). Stored bytes and the books are read in SQL.
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from "bun:test";
import { dbKinds, type TestGateway } from "../harness";
import { money, proxiedGateway, tenant, type RecordingProxy } from "../support/chat";
import { postResponses, streamFrames } from "./helpers";

setDefaultTimeout(60_000);

/** The account's stored bytes as text, whatever the tables' shape (contexts apart or inline). */
async function storedBytes(g: TestGateway, userId: string): Promise<number> {
  const db = g.gw.deps.db;
  const [r] = await db.query<any>(
    "select coalesce(sum(octet_length(r::text)), 0)::text as b from stored_responses r where user_id = $1",
    [userId],
  );
  const [has] = await db.query<any>("select to_regclass('stored_response_contexts') is not null as x");
  const [c] = has.x
    ? await db.query<any>(
        "select coalesce(sum(octet_length(c::text)), 0)::text as b from stored_response_contexts c where user_id = $1",
        [userId],
      )
    : [{ b: "0" }];
  return Number(r.b) + Number(c.b);
}

async function books(g: TestGateway, userId: string) {
  await g.gw.settlements.quiesce(userId);
  const [row] = await g.gw.deps.db.query<any>(
    `select (select count(*) from ledger_entries where user_id = $1 and kind = 'charge')::int as charges,
            (select coalesce(sum(-amount_micro), 0)::text from ledger_entries where user_id = $1 and kind = 'charge') as charged,
            (select count(*) from usage_events where user_id = $1 and status = 200)::int as answered,
            (select count(*) from usage_events where user_id = $1 and cached)::int as hits,
            (select count(*) from holds where user_id = $1 and status = 'open')::int as open_holds`,
    [userId],
  );
  return { ...row, charged: BigInt(row.charged) };
}

/** About `kb` KiB of text, different for each `seed`. */
const filler = (seed: string, kb: number) => `${seed} `.padEnd(kb * 1024, "lorem ipsum dolor sit amet ");

for (const kind of await dbKinds())
  describe(`stored responses: sizes and quota on ${kind}`, () => {
    let g: TestGateway;
    let proxy: RecordingProxy;
    beforeAll(async () => {
      ({ g, proxy } = await proxiedGateway(
        ["openai"],
        { RESPONSES_STORE: "on", RESPONSES_STORE_MAX_RESPONSE_KB: "256", RESPONSES_STORE_ACCOUNT_MB: "1" },
        kind,
      ));
    }, 60_000);
    afterAll(async () => {
      await g?.stop();
      proxy?.stop();
    });

    test("ten free cache hits of a 100 KiB input add their answers, not the input ten times", async () => {
      const { user, key } = await tenant(g, 5000, { response_cache_mode: "exact" });
      const body = { model: "gpt-4o-mini", input: filler("cached", 100), temperature: 0 };
      const first = await postResponses(g, key.key, body);
      expect(first.status).toBe(200);
      const a: any = await first.json();
      expect(a.store).toBe(true);
      const afterFirst = await storedBytes(g, user.id);
      expect(afterFirst).toBeGreaterThan(100 * 1024);

      const ids: string[] = [];
      for (let i = 0; i < 10; i++) {
        const r = await postResponses(g, key.key, body);
        expect(r.status).toBe(200);
        expect(r.headers.get("x-cost-krw")).toBe("0");
        const hit: any = await r.json();
        expect(hit.cached).toBe(true);
        expect(hit.store).toBe(true);
        ids.push(hit.id);
      }
      const grown = (await storedBytes(g, user.id)) - afterFirst;
      // Before the fix each hit stored the whole input again: 10 × ~100 KiB. Now only answers.
      expect(grown).toBeLessThan(50 * 1024);
      // Every hit is still a whole stored response: readable and continuable.
      const got = await g.call("GET", `/v1/responses/${ids[9]}`, { token: key.key });
      expect(got.status).toBe(200);
      const next = await postResponses(g, key.key, {
        model: "gpt-4o-mini",
        input: "go on",
        previous_response_id: ids[9],
      });
      expect(next.status).toBe(200);
      expect(JSON.stringify(proxy.chatBodies().at(-1))).toContain("cached lorem");
      // Deleting one hit keeps the context the others still name.
      expect((await g.call("DELETE", `/v1/responses/${ids[0]}`, { token: key.key })).status).toBe(200);
      expect(
        (await postResponses(g, key.key, { model: "gpt-4o-mini", input: "more", previous_response_id: ids[1] })).status,
      ).toBe(200);

      const b = await books(g, user.id);
      expect(b).toMatchObject({ charges: 3, answered: 13, hits: 10, open_holds: 0 });
    });

    test("a response over the per-response limit is answered and charged once, not kept, and says so", async () => {
      const { user, key } = await tenant(g, 5000);
      const before = await money(g, user.id);
      const r = await postResponses(g, key.key, { model: "gpt-4o-mini", input: filler("large", 300) });
      expect(r.status).toBe(200);
      expect(r.headers.get("x-response-stored")).toBe("false; reason=response_too_large");
      const a: any = await r.json();
      expect(a.store).toBe(false);
      expect((await g.call("GET", `/v1/responses/${a.id}`, { token: key.key })).status).toBe(404);
      expect(await storedBytes(g, user.id)).toBe(0);
      const b = await books(g, user.id);
      expect(b).toMatchObject({ charges: 1, answered: 1, open_holds: 0 });
      const after = await money(g, user.id);
      expect(before.balance - after.balance).toBe(b.charged);
    });

    test("past the account quota answers are charged once each and nothing more is kept", async () => {
      const { user, key } = await tenant(g, 20_000);
      const before = await money(g, user.id);
      const outcomes: (string | null)[] = [];
      for (let i = 0; i < 8; i++) {
        const r = await postResponses(g, key.key, { model: "gpt-4o-mini", input: filler(`quota-${i}`, 200) });
        expect(r.status).toBe(200);
        const a: any = await r.json();
        outcomes.push(r.headers.get("x-response-stored"));
        expect(a.store).toBe(outcomes.at(-1) === null);
      }
      // 1 MiB holds five of these (~202 KiB each with the answer); the sixth and later are refused.
      expect(outcomes.slice(0, 5)).toEqual(Array(5).fill(null));
      expect(outcomes.slice(5)).toEqual(Array(3).fill("false; reason=account_quota"));
      const used = await storedBytes(g, user.id);
      expect(used).toBeLessThanOrEqual(1024 * 1024 + 64 * 1024);

      // A stream that no longer fits says so before its first event, and its completed response
      // carries store: false.
      const { res, frames } = await streamFrames(g, key.key, { model: "gpt-4o-mini", input: filler("stream", 200) });
      expect(res.headers.get("x-response-stored")).toBe("false; reason=account_quota");
      const completed = frames.find((f) => f.json?.type === "response.completed")!.json.response;
      expect(completed.store).toBe(false);
      expect((await g.call("GET", `/v1/responses/${completed.id}`, { token: key.key })).status).toBe(404);

      const b = await books(g, user.id);
      expect(b).toMatchObject({ charges: 9, answered: 9, open_holds: 0 });
      expect(before.balance - (await money(g, user.id)).balance).toBe(b.charged);
      // Deleting a kept response frees room again.
      const [row] = await g.gw.deps.db.query<any>("select id from stored_responses where user_id = $1 limit 1", [
        user.id,
      ]);
      expect((await g.call("DELETE", `/v1/responses/${row.id}`, { token: key.key })).status).toBe(200);
      const again = await postResponses(g, key.key, { model: "gpt-4o-mini", input: "room again" });
      expect(again.headers.get("x-response-stored")).toBeNull();
      expect(((await again.json()) as any).store).toBe(true);
    });
  });
