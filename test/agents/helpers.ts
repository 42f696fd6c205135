/**
 * Shared pieces of the real-agent tests (Codex CLI, the OpenAI Agents SDK, the Vercel AI SDK):
 * a gateway in demo mode, a tenant with a key, the cheapest tool-capable catalog model per
 * maker (read from `GET /v1/models`, so the tests follow the catalog), and the books of a run read in SQL:
 * every upstream call the simulator answered is one usage event and one charge, nothing held.
 */
import { expect } from "bun:test";
import { startTestGateway, type TestGateway } from "../harness";

/** The tenant's credit: enough for the largest hold a frontier model's full output could take. */
export const CREDIT_KRW = 200_000;

/** A gateway as demo mode runs it: providers without a credential answered by the simulator. */
export function startDemoGateway(): Promise<TestGateway> {
  return startTestGateway({ env: { DEMO_MODE: "true" } });
}

export async function agentTenant(g: TestGateway) {
  const user = await g.newUser({ creditKrw: CREDIT_KRW });
  const key = await g.newKey(user);
  return { user, key: key.key as string, keyId: key.id as string };
}

export type Maker = "anthropic" | "openai" | "google";

/** The provider that is each maker's own API (open-weight models of a maker are served by others). */
const OWN_PROVIDER: Record<Maker, string> = { anthropic: "anthropic", openai: "openai", google: "google" };

/**
 * The cheapest available chat model with tools from `maker` in this gateway's catalog, served
 * first by the maker's own API (by output price, then id): deterministic for a given catalog,
 * and the kind of model an agent test would pick.
 */
export async function modelOf(g: TestGateway, key: string, maker: Maker): Promise<string> {
  const r = await g.call("GET", "/v1/models", { token: key });
  expect(r.status).toBe(200);
  const outputPrice = (m: any) => Math.min(...(m.providers ?? []).map((p: any) => p.pricing?.output ?? Infinity));
  const candidates = (r.body.data as any[])
    .filter(
      (m) =>
        m.maker === maker &&
        m.modality === "text" &&
        m.kind === "leaf" &&
        m.available === true &&
        m.capabilities?.tools === true &&
        m.providers?.[0]?.id === OWN_PROVIDER[maker] &&
        m.lifecycle !== "retired",
    )
    .sort((a, b) => outputPrice(a) - outputPrice(b) || String(a.id).localeCompare(String(b.id)));
  if (candidates.length === 0) throw new Error(`no ${maker} chat model with tools in the catalog`);
  return candidates[0].id;
}

export interface Books {
  balance: bigint;
  held: bigint;
  events: any[];
  charges: any[];
  holds: any[];
  keySpent: bigint;
  keyHeld: bigint;
}

/** The tenant's books once every settlement has landed. */
export async function readBooks(g: TestGateway, userId: string, keyId: string): Promise<Books> {
  await g.gw.settlements.quiesce();
  const db = g.gw.deps.db;
  const [u] = await db.query<any>(`select balance_micro, held_micro from users where id = $1`, [userId]);
  const holds = await db.query<any>(`select status, charged_micro from holds where user_id = $1`, [userId]);
  const charges = await db.query<any>(
    `select amount_micro, request_id from ledger_entries where user_id = $1 and kind = 'charge'`,
    [userId],
  );
  const events = await db.query<any>(
    `select request_id, status, model, provider, api, cost_micro, prompt_tokens, completion_tokens
       from usage_events where user_id = $1`,
    [userId],
  );
  const [k] = await db.query<any>(
    `select coalesce(sum(spent_micro), 0) as spent, coalesce(sum(held_micro), 0) as held
       from key_monthly where key_id = $1`,
    [keyId],
  );
  return {
    balance: BigInt(u.balance_micro),
    held: BigInt(u.held_micro),
    holds,
    charges,
    events,
    keySpent: BigInt(k.spent),
    keyHeld: BigInt(k.held),
  };
}

/**
 * The books after a run of `calls` answered model calls (the simulator's count): one usage
 * event (status 200, the API and provider expected) and one charge per call, each charge the
 * event's cost, the balance down by exactly their sum, the key's spend the same, nothing held.
 */
export async function expectChargedOnce(
  g: TestGateway,
  tenant: { user: { id: string }; keyId: string },
  opts: { calls: number; api: string; provider: string; model: string },
): Promise<Books> {
  const b = await readBooks(g, tenant.user.id, tenant.keyId);
  expect(b.events).toHaveLength(opts.calls);
  for (const e of b.events) {
    expect(e).toMatchObject({ status: 200, api: opts.api, provider: opts.provider, model: opts.model });
    expect(BigInt(e.cost_micro)).toBeGreaterThan(0n);
  }
  expect(b.charges).toHaveLength(opts.calls);
  expect(new Set(b.charges.map((c) => c.request_id)).size).toBe(opts.calls);
  const byId = new Map(b.events.map((e) => [e.request_id, e]));
  for (const c of b.charges) expect(-BigInt(c.amount_micro)).toBe(BigInt(byId.get(c.request_id)!.cost_micro));
  const total = b.charges.reduce((s: bigint, c) => s - BigInt(c.amount_micro), 0n);
  expect(b.balance).toBe(BigInt(CREDIT_KRW) * 1_000_000n - total);
  expect(b.held).toBe(0n);
  expect(b.keySpent).toBe(total);
  expect(b.keyHeld).toBe(0n);
  expect(b.holds.filter((h) => h.status !== "settled")).toEqual([]);
  return b;
}

/** Upstream calls the gateway's simulator answered since its last reset. */
export function simCalls(g: TestGateway): number {
  if (!g.gw.sim) throw new Error("the gateway runs without its simulator");
  return g.gw.sim.stats().total;
}
