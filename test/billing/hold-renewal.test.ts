/**
 * A stream that outlives HOLD_TTL_SECONDS is still charged. A running
 * call keeps its hold alive (src/core/billing/hold-keeper.ts): the sweeper of any instance then
 * never takes it for the hold of a request that died.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { dbKinds, postgresAvailable, startTestGateway, type TestGateway } from "../harness";
import { chat, chatFetch, money, tenant, user } from "../support/chat";
import { checkBooks } from "../support/books";

setDefaultTimeout(90_000);

const TTL = 30; // the schema's minimum

/** Reads a stream to its end; the request id and the final event (usage and cost). */
async function readStream(res: Response): Promise<{ rid: string; final: any; text: string }> {
  const rid = res.headers.get("x-request-id")!;
  const text = await res.text();
  const events = text.split("\n\n").filter((e) => e.startsWith("data: {"));
  return { rid, final: JSON.parse(events.at(-1)!.slice(6)), text };
}

describe("a stream longer than HOLD_TTL_SECONDS", () => {
  const gws: TestGateway[] = [];
  beforeAll(async () => {
    for (const kind of await dbKinds())
      gws.push(await startTestGateway({ db: kind, env: { HOLD_TTL_SECONDS: String(TTL) } }));
  }, 60_000);
  afterAll(async () => {
    for (const g of gws) await g.stop();
  });

  test("is charged at its end although a sweep ran after its hold's first expiry (real time, ~36 s)", async () => {
    // One stream per database, side by side: 12 frames 3.2 s apart, about 35 s in all.
    await Promise.all(
      gws.map(async (g) => {
        const { user: u, key } = await tenant(g, 100);
        const t0 = performance.now();
        const res = await chatFetch(g, key.key, {
          model: "gpt-4o-mini",
          stream: true,
          messages: user("a long answer [sim:tokens=40] [sim:chunk_ms=3200]"),
        });
        expect(res.status).toBe(200);
        const reading = readStream(res);
        // The hold was placed with a 30 s TTL: past it, an instance's sweeper runs.
        await Bun.sleep(TTL * 1000 + 2000 - (performance.now() - t0));
        const rid = res.headers.get("x-request-id")!;
        await g.gw.ledger.sweepExpired();
        const [open] = await g.gw.deps.db.query<{ status: string; left: number }>(
          "select status, extract(epoch from expires_at - now())::float8 as left from holds where id = $1",
          [rid],
        );
        expect(open!.status).toBe("open");
        expect(open!.left).toBeGreaterThan(TTL / 2);
        const { final, text } = await reading;
        expect(performance.now() - t0).toBeGreaterThan(TTL * 1000);
        expect(text.endsWith("data: [DONE]\n\n")).toBe(true);
        await g.gw.settlements.quiesce();
        const [h] = await g.gw.deps.db.query<{ status: string; charged: string }>(
          "select status, charged_micro::text as charged from holds where id = $1",
          [rid],
        );
        expect(h!.status).toBe("settled");
        const charges = await g.gw.deps.db.query<{ a: string }>(
          "select (-amount_micro)::text as a from ledger_entries where request_id = $1 and kind = 'charge'",
          [rid],
        );
        expect(charges.map((c) => c.a)).toEqual([h!.charged]);
        expect(final.usage.completion_tokens).toBe(40);
        expect(await money(g, u.id)).toEqual({ balance: 100_000_000n - BigInt(h!.charged), held: 0n });
        expect((await checkBooks(g.gw.deps.db, [u.id])).violations).toEqual([]);
      }),
    );
  });
});

for (const kind of await dbKinds()) {
  describe(`renewing the holds of running calls (${kind})`, () => {
    let g: TestGateway;
    beforeAll(async () => {
      g = await startTestGateway({ db: kind, env: { HOLD_TTL_SECONDS: String(TTL) } });
    }, 60_000);
    afterAll(async () => {
      await g?.stop();
    });

    test("a live stream's hold is renewed to a full TTL; another instance's sweep then leaves it; a finished call is let go", async () => {
      const { user: u, key } = await tenant(g, 100);
      const res = await chatFetch(g, key.key, {
        model: "gpt-4o-mini",
        stream: true,
        messages: user("renew me [sim:tokens=20] [sim:chunk_ms=400]"),
      });
      const rid = res.headers.get("x-request-id")!;
      const db = g.gw.deps.db;
      // As if the TTL had nearly run out.
      await db.query("update holds set expires_at = now() + interval '1 second' where id = $1", [rid]);
      expect(g.gw.keeper.size).toBeGreaterThan(0);
      await g.gw.keeper.renewNow();
      const [h] = await db.query<{ left: number }>(
        "select extract(epoch from expires_at - now())::float8 as left from holds where id = $1",
        [rid],
      );
      expect(h!.left).toBeGreaterThan(TTL - 5);
      await Bun.sleep(1500);
      await g.gw.ledger.sweepExpired(); // what any instance's sweeper does
      await res.text();
      await g.gw.settlements.quiesce();
      const [done] = await db.query<{ status: string }>("select status from holds where id = $1", [rid]);
      expect(done!.status).toBe("settled");
      expect(g.gw.keeper.size).toBe(0);
      expect((await money(g, u.id)).held).toBe(0n);
    });

    test("a JSON call that fails or is refused is let go too (nothing kept behind)", async () => {
      const { key } = await tenant(g, 100);
      expect((await chat(g, key.key, { model: "gpt-4o-mini", messages: user("no [sim:fail=400]") })).status).toBe(502);
      const poor = await tenant(g, 0);
      expect((await chat(g, poor.key.key, { model: "gpt-4o-mini", messages: user("hi") })).status).toBe(402);
      expect((await chat(g, key.key, { model: "gpt-4o-mini", messages: user("hi") })).status).toBe(200);
      expect(g.gw.keeper.size).toBe(0);
    });
  });
}

if (await postgresAvailable()) {
  describe("a call held against a credit lease (pg)", () => {
    let g: TestGateway;
    beforeAll(async () => {
      g = await startTestGateway({ db: "pg", env: { HOLD_TTL_SECONDS: String(TTL), LEDGER_LEASES: "on" } });
    }, 60_000);
    afterAll(async () => {
      await g?.stop();
    });

    test("keeps its lease alive", async () => {
      const { key } = await tenant(g, 1000);
      // A burst makes the key busy: a lease opens and the next calls are held against it. The
      // lease opens on its way (16 holds within 100 ms): on a loaded machine a burst may end
      // before it is there, so burst again until a stream rides on one (a few tries at most).
      let res: Response | null = null;
      let lease: string | undefined;
      for (let attempt = 0; attempt < 5 && !lease; attempt++) {
        if (res) await res.text();
        await Promise.all(
          Array.from({ length: 40 }, () =>
            chat(g, key.key, { model: "gpt-4o-mini", messages: user("hi"), max_tokens: 20 }),
          ),
        );
        res = await chatFetch(g, key.key, {
          model: "gpt-4o-mini",
          stream: true,
          max_tokens: 20,
          messages: user("hi [sim:chunk_ms=300]"),
        });
        lease = g.gw.ledger.leases!.leaseOf(res.headers.get("x-request-id")!);
      }
      expect(lease).toBeString();
      const db = g.gw.deps.db;
      await db.query("update holds set expires_at = now() + interval '1 second' where id = $1", [lease]);
      await g.gw.keeper.renewNow();
      const [h] = await db.query<{ left: number }>(
        "select extract(epoch from expires_at - now())::float8 as left from holds where id = $1",
        [lease],
      );
      expect(h!.left).toBeGreaterThan(TTL - 5);
      await res!.text();
    });
  });
}
