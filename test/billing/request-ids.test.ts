/**
 * Client request ids (`X-Request-Id`): an id names one call of its account. A reused id is
 * refused with 409 `request_id_reused` before any upstream call, on every path that answers a
 * call — the database hold, a busy key's credit lease, the response cache, streams and the
 * Responses API — and the books show one charge. Another account using the same id is not
 * affected: ids are scoped to the account.
 */
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { dbKinds, postgresAvailable, suiteGateway, type TestGateway } from "../harness";
import { chat, chatFetch, errorCode, fastUser, money, tenant, user } from "../support/chat";
import { checkBooks } from "../support/books";

setDefaultTimeout(30_000);

const cheap = (text: string) => ({ model: "gpt-4o-mini", messages: user(text), max_tokens: 20 });

/** Charges and usage events of an account (its settles landed first). */
async function books(g: TestGateway, userId: string): Promise<{ charges: number; events: number }> {
  await g.gw.settlements.quiesce(userId);
  const [r] = await g.gw.deps.db.query<{ charges: number; events: number }>(
    `select (select count(*)::int from ledger_entries where user_id = $1 and kind = 'charge') as charges,
            (select count(*)::int from usage_events where user_id = $1) as events`,
    [userId],
  );
  return r!;
}

/** Every call the simulator received (chat and embeddings, all providers). */
const simCalls = (g: TestGateway) => g.gw.sim!.stats().total;

/** Upstream calls made while `f` ran (an overlapped call aborted on its way still counts once it left). */
async function upstreamCallsOf<T>(g: TestGateway, f: () => Promise<T>): Promise<{ result: T; calls: number }> {
  const before = simCalls(g);
  const result = await f();
  await Bun.sleep(100);
  return { result, calls: simCalls(g) - before };
}

/** `n` calls with one X-Request-Id, all at once or one after another; their statuses and bodies. */
async function reuse(g: TestGateway, key: string, rid: string, n: number, how: "concurrent" | "sequence") {
  const one = () => chat(g, key, cheap(`reuse ${rid}`), { "x-request-id": rid });
  if (how === "concurrent") return Promise.all(Array.from({ length: n }, one));
  const out = [];
  for (let i = 0; i < n; i++) out.push(await one());
  return out;
}

/** Exactly one answer, the rest 409 request_id_reused, one upstream call, one charge. */
async function expectOnce(g: TestGateway, userId: string, key: string, how: "concurrent" | "sequence") {
  const rid = crypto.randomUUID();
  const before = await books(g, userId);
  const balance = (await money(g, userId)).balance;
  const { result: replies, calls } = await upstreamCallsOf(g, () => reuse(g, key, rid, 12, how));
  const statuses = replies.map((r) => r.status);
  expect(statuses.filter((s) => s === 200)).toEqual([200]);
  expect(statuses.filter((s) => s !== 200)).toEqual(Array(11).fill(409));
  for (const r of replies.filter((x) => x.status === 409)) {
    expect(errorCode(r.body)).toBe("request_id_reused");
    expect(r.headers.get("x-request-id")).toBe(rid);
  }
  expect(calls).toBe(1);
  const after = await books(g, userId);
  expect(after.charges - before.charges).toBe(1);
  expect(after.events - before.events).toBe(1);
  // The one answer's minimum charge, no more.
  expect(balance - (await money(g, userId)).balance).toBe(100_000n);
}

for (const kind of await dbKinds()) {
  describe(`request ids on ${kind} (leases off, the default)`, () => {
    const gateway = suiteGateway({ db: kind });

    test("one id fired 12 times at once, then 12 times in a row: one answer, one upstream call, one charge each", async () => {
      const g = gateway();
      const { user: u, key } = await tenant(g, 100);
      // The ledger has answered for the key: its holds may now travel alongside the upstream call.
      expect((await chat(g, key.key, cheap("warm"))).status).toBe(200);
      await expectOnce(g, u.id, key.key, "concurrent");
      await expectOnce(g, u.id, key.key, "sequence");
      expect((await checkBooks(g.gw.deps.db, [u.id])).violations).toEqual([]);
      expect((await money(g, u.id)).held).toBe(0n);
    });

    test("a reused id is refused before the upstream on streams and on the Responses API", async () => {
      const g = gateway();
      const { user: u, key } = await tenant(g, 100);
      const rid = crypto.randomUUID();
      expect((await chat(g, key.key, cheap("first"), { "x-request-id": rid })).status).toBe(200);
      const before = await books(g, u.id);
      const { result, calls } = await upstreamCallsOf(g, async () => {
        const stream = await chatFetch(
          g,
          key.key,
          { ...cheap("again"), stream: true },
          { headers: { "x-request-id": rid } },
        );
        const responses = await g.call("POST", "/v1/responses", {
          token: key.key,
          body: { model: "gpt-4o-mini", input: "again" },
          headers: { "x-request-id": rid },
        });
        const responsesStream = await g.call("POST", "/v1/responses", {
          token: key.key,
          body: { model: "gpt-4o-mini", input: "again", stream: true },
          headers: { "x-request-id": rid },
        });
        return [{ status: stream.status, body: await stream.json() }, responses, responsesStream];
      });
      expect(result.map((r) => [r.status, errorCode(r.body)])).toEqual(Array(3).fill([409, "request_id_reused"]));
      expect(calls).toBe(0);
      expect(await books(g, u.id)).toEqual(before);
    });

    test("a response-cache hit is one call too: a reused id is refused before the cache (and its embedding) is asked", async () => {
      const g = gateway();
      for (const mode of ["exact", "semantic"]) {
        const u = await fastUser(g, { creditKrw: 100 });
        const k = await g.newKey(u, { response_cache_mode: mode });
        const body = cheap(`cache me ${mode} ${crypto.randomUUID()}`);
        const miss = crypto.randomUUID();
        expect((await chat(g, k.key, body, { "x-request-id": miss })).status).toBe(200);
        // Stored behind the answer: wait for the entry, so the next identical call is a hit.
        for (let i = 0; i < 100; i++) {
          const [r] = await g.gw.deps.db.query<{ n: number }>(
            "select count(*)::int as n from response_cache where key_id = $1",
            [k.id],
          );
          if (r!.n) break;
          await Bun.sleep(20);
        }
        const hit = crypto.randomUUID();
        const first = await chat(g, k.key, body, { "x-request-id": hit });
        expect(first.status).toBe(200);
        expect(first.body.cached).toBe(true);
        const before = await books(g, u.id);
        const { result, calls } = await upstreamCallsOf(g, async () => {
          const all = [];
          for (const rid of [miss, hit]) all.push(await chat(g, k.key, body, { "x-request-id": rid }));
          return all;
        });
        expect(result.map((r) => [r.status, errorCode(r.body)])).toEqual([
          [409, "request_id_reused"],
          [409, "request_id_reused"],
        ]);
        // Not even the embedding of a semantic lookup.
        expect(calls).toBe(0);
        expect(await books(g, u.id)).toEqual(before);
        expect((await money(g, u.id)).held).toBe(0n);
      }
    });

    test("ids are scoped to the account: two accounts using one id are both answered and charged; the same account again gets 409", async () => {
      const g = gateway();
      const a = await tenant(g, 10);
      const b = await tenant(g, 10);
      const rid = crypto.randomUUID();
      const ra = await chat(g, a.key.key, cheap("tenant a"), { "x-request-id": rid });
      const rb = await chat(g, b.key.key, cheap("tenant b"), { "x-request-id": rid });
      expect([ra.status, rb.status]).toEqual([200, 200]);
      expect([ra.headers.get("x-request-id"), rb.headers.get("x-request-id")]).toEqual([rid, rid]);
      for (const t of [a, b]) {
        expect(await money(g, t.user.id)).toEqual({ balance: 9_900_000n, held: 0n });
        expect(await books(g, t.user.id)).toEqual({ charges: 1, events: 1 });
      }
      const again = await chat(g, b.key.key, cheap("tenant b again"), { "x-request-id": rid });
      expect([again.status, errorCode(again.body)]).toEqual([409, "request_id_reused"]);
      // The feedback endpoint finds the call by the id its client gave it.
      expect(
        (await g.call("POST", `/v1/responses/${rid}/feedback`, { token: b.user.jwt, body: { rating: "up" } })).status,
      ).toBe(201);
      expect(
        (
          await g.call("POST", `/v1/responses/resp_${rid.replace(/-/g, "")}/feedback`, {
            token: a.user.jwt,
            body: { rating: "down" },
          })
        ).status,
      ).toBe(201);
      expect(ra.body.id).toBe(`chatcmpl-${rid.replace(/-/g, "")}`);
    });
  });
}

if (await postgresAvailable()) {
  describe("request ids under credit leases (pg, LEDGER_LEASES=on)", () => {
    const gateway = suiteGateway({ db: "pg", env: { LEDGER_LEASES: "on" } });

    /** Makes the key busy so it holds an open lease (calls would ride on it). */
    async function busy(g: TestGateway, userId: string, key: string): Promise<void> {
      let next = 0;
      await Promise.all(
        Array.from({ length: 32 }, async () => {
          while (next++ < 120) expect((await chat(g, key, cheap("busy"))).status).toBe(200);
        }),
      );
      await g.gw.settlements.quiesce(userId);
      const [open] = await g.gw.deps.db.query<{ n: number }>(
        "select count(*)::int as n from holds where lease and status = 'open' and user_id = $1",
        [userId],
      );
      expect(open!.n).toBeGreaterThan(0);
    }

    test("a key holding a lease: one id fired at once and in a row is answered once, charged once, sent upstream once", async () => {
      const g = gateway();
      const { user: u, key } = await tenant(g, 1000);
      await busy(g, u.id, key.key);
      await expectOnce(g, u.id, key.key, "concurrent");
      await busy(g, u.id, key.key);
      await expectOnce(g, u.id, key.key, "sequence");
      expect((await g.call("GET", "/v1/me", { token: u.jwt })).body.held_krw).toBe(0);
      expect((await checkBooks(g.gw.deps.db, [u.id])).violations).toEqual([]);
    });

    test("an id reused after its call was charged against a lease, and a server-given id sent back: no answered call is free", async () => {
      const g = gateway();
      const { user: u, key } = await tenant(g, 1000);
      await busy(g, u.id, key.key);
      const rid = crypto.randomUUID();
      const first = await chat(g, key.key, cheap("on the lease"), { "x-request-id": rid });
      expect(first.status).toBe(200);
      // A call that rode on the lease, with the id the gateway gave it.
      const given = (await chat(g, key.key, cheap("server id"))).headers.get("x-request-id")!;
      // Reading the account retires its leases: the next calls hold in the database.
      expect((await g.call("GET", "/v1/me", { token: u.jwt })).status).toBe(200);
      const before = await books(g, u.id);
      const reused = await chat(g, key.key, cheap("reused"), { "x-request-id": rid });
      expect([reused.status, errorCode(reused.body)]).toEqual([409, "request_id_reused"]);
      // A client sending back an id the gateway chose names a new call of its own: answered and charged.
      const sentBack = await chat(g, key.key, cheap("sent back"), { "x-request-id": given });
      expect(sentBack.status).toBe(200);
      const after = await books(g, u.id);
      expect(after.charges - before.charges).toBe(1);
      expect(after.events - before.events).toBe(1);
      expect((await g.call("GET", "/v1/me", { token: u.jwt })).body.held_krw).toBe(0);
      expect((await checkBooks(g.gw.deps.db, [u.id])).violations).toEqual([]);
    });
  });
}
