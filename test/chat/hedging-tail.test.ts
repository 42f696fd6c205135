/**
 * What hedging buys: the tail of time to first byte. 40 calls of deepseek-v3, every fifth slow
 * at deepseek only (`[sim:latency@deepseek=1200]`), once with hedging off and once on (hedge
 * delay bounded to 50–250 ms). Off, the slow calls wait the whole 1.2 s; on, together answers
 * them shortly after the delay. Every call is charged exactly once, at the price of the provider
 * that answered, plus a hedged call's cancelled loser's input (SQL). The figures are printed for
 * docs/hedging.md.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { startTestGateway, type TestGateway } from "../harness";
import { chatFetch, eventually, tenant, user } from "../support/chat";

setDefaultTimeout(120_000);

const CALLS = 40;
const SLOW = 1200;
/** Input and output price per token in micro-won (USD per million × 1,400), per provider. */
const PRICE: Record<string, [number, number]> = { deepseek: [378, 1540], together: [1750, 1750] };

let g: TestGateway;
beforeAll(async () => {
  g = await startTestGateway({ env: { HEDGE_MIN_DELAY_MS: "50", HEDGE_MAX_DELAY_MS: "250" } });
}, 60_000);
afterAll(async () => {
  await g?.stop();
});

const quantile = (xs: number[], q: number) => [...xs].sort((a, b) => a - b)[Math.ceil(xs.length * q) - 1]!;

/** Time to the first body byte of each call (a stream's first chunk), and the request ids. */
async function run(hedge: boolean, tag: string) {
  const t = await tenant(g, 5000, { hedge });
  await g.admin("PATCH", `/v1/admin/users/${t.user.id}`, { xborder_training_consent: true });
  const ttfb: number[] = [];
  const ids: string[] = [];
  for (let i = 0; i < CALLS; i++) {
    const slow = i % 5 === 4 ? ` [sim:latency@deepseek=${SLOW}]` : "";
    const t0 = performance.now();
    const res = await chatFetch(g, t.key.key, {
      model: "deepseek-v3",
      messages: user(`${tag} ${i} [sim:tokens=100]${slow}`),
      stream: true,
    });
    const reader = res.body!.getReader();
    await reader.read();
    ttfb.push(performance.now() - t0);
    while (!(await reader.read()).done);
    ids.push(res.headers.get("x-request-id")!);
  }
  return { ttfb, ids, userId: t.user.id };
}

describe("tail latency with and without hedging", () => {
  test("p99 and max time to first byte drop; every call is charged once: its winner, and a hedged one its loser's input", async () => {
    const off = await run(false, "off");
    const on = await run(true, "on");
    const figures = (xs: number[]) => ({
      p50: Math.round(quantile(xs, 0.5)),
      p95: Math.round(quantile(xs, 0.95)),
      p99: Math.round(quantile(xs, 0.99)),
      max: Math.round(Math.max(...xs)),
    });
    console.error(
      JSON.stringify({ calls: CALLS, slow_every: 5, slow_ms: SLOW, off: figures(off.ttfb), on: figures(on.ttfb) }),
    );
    expect(quantile(off.ttfb, 0.99)).toBeGreaterThanOrEqual(SLOW);
    expect(quantile(on.ttfb, 0.99)).toBeLessThan(SLOW / 2);
    expect(Math.max(...on.ttfb)).toBeLessThan(SLOW / 2);

    const db = g.gw.deps.db;
    for (const r of [off, on]) {
      await eventually(
        async () =>
          (await db.query("select 1 from holds where user_id = $1 and status = 'open'", [r.userId])).length === 0,
      );
      const rows = await db.query<{
        request_id: string;
        provider: string;
        p: number;
        c: number;
        cost: string;
        charge: string | null;
        charges: string;
      }>(
        `select u.request_id, u.provider, u.prompt_tokens as p, u.completion_tokens as c, u.cost_micro::text as cost,
                (select sum(l.amount_micro)::text from ledger_entries l where l.request_id = u.request_id and l.kind = 'charge') as charge,
                (select count(*)::text from ledger_entries l where l.request_id = u.request_id and l.kind = 'charge') as charges
           from usage_events u where u.user_id = $1`,
        [r.userId],
      );
      expect(rows.map((x) => x.request_id).sort()).toEqual([...r.ids].sort());
      for (const x of rows) {
        const [inp, out] = PRICE[x.provider]!;
        const price = Math.max(100_000, x.p * inp + x.c * out); // at least the 0.1 KRW minimum
        expect([x.charges, x.charge]).toEqual(["1", String(-Number(x.cost))]);
        // A hedged call also pays its cancelled loser's input (docs/hedging.md): never without hedging.
        const loser = Number(x.cost) - price;
        if (r === off) expect(loser).toBe(0);
        else if (x.provider === "together") expect(loser).toBeGreaterThan(0);
        else expect(loser).toBeGreaterThanOrEqual(0);
      }
      const together = rows.filter((x) => x.provider === "together").length;
      expect(together).toBe(r === off ? 0 : CALLS / 5);
    }
  });
});
