/**
 * Issue 28 #11: two sybil accounts and a victim. With a threshold of "3 distinct accounts",
 * an attacker's two accounts plus the victim's name the victim's app and model, and the
 * attacker subtracts their own usage (known to the token) from the published figures to get
 * the victim's exactly. With the defaults, accounts count only for paid calls made once they
 * are a week old, and every published figure carries keyed noise: fresh sybils name nothing,
 * and aged ones get a figure from which the victim's usage cannot be computed exactly. Real
 * chat calls over HTTP, the gateway's own rollup job, the victim's usage read from SQL.
 */
import { afterAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { dbKinds, startTestGateway, type TestGateway } from "../harness";
import { chat, fastUser, user } from "../support/chat";

setDefaultTimeout(60_000);

const MODEL = "claude-haiku-4-5";
const [kind] = await dbKinds();
const gateways: TestGateway[] = [];
afterAll(async () => {
  for (const g of gateways) await g.stop();
});

async function gateway(env: Record<string, string> = {}): Promise<TestGateway> {
  const g = await startTestGateway({
    db: kind,
    env: { STATS_MIN_DISTINCT_ACCOUNTS: "3", STATS_ROLLUP_INTERVAL_MS: "100", ...env },
  });
  gateways.push(g);
  return g;
}

/** An account created `days` ago (an established customer, or a sybil that waited), with credit. */
async function account(g: TestGateway, days: number) {
  const u = await fastUser(g, { creditKrw: 1000 });
  if (days)
    await g.gw.deps.db.query(`update users set created_at = now() - interval '${days} days' where id = $1`, [u.id]);
  return { ...u, key: (await g.newKey(u)).key };
}

async function calls(g: TestGateway, key: string, app: string, n: number, words: string) {
  for (let i = 0; i < n; i++) {
    const r = await chat(g, key, { model: MODEL, messages: user(`${words} ${i}`), max_tokens: 20 }, { "X-Title": app });
    expect(r.status).toBe(200);
  }
}

/** Waits until the rollup job has folded every usage event. */
async function rolledUp(g: TestGateway): Promise<void> {
  const db = g.gw.deps.db;
  const deadline = Date.now() + 15_000;
  for (;;) {
    const [r] = await db.query<{ behind: boolean }>(
      "select coalesce((select max(id) from usage_events), 0) > (select watermark from stats_rollup_state where id = 1) as behind",
    );
    if (r && !r.behind) return;
    if (Date.now() > deadline) throw new Error("rollups stuck");
    await Bun.sleep(100);
  }
}

/** One account's exact tokens and calls for the app, from the usage events. */
async function usage(g: TestGateway, ids: string[], app: string) {
  const [r] = await g.gw.deps.db.query<{ t: string; c: string }>(
    "select coalesce(sum(prompt_tokens + completion_tokens), 0)::text as t, count(*)::text as c from usage_events where user_id = any($1::uuid[]) and app = $2",
    [`{${ids.join(",")}}`, app],
  );
  return { tokens: Number(r!.t), calls: Number(r!.c) };
}

/** What the public statistics say about the app and the model. */
async function published(g: TestGateway, app: string) {
  const apps = (await g.call("GET", "/v1/stats/apps?period=daily")).body.apps;
  const models = (await g.call("GET", "/v1/stats/models")).body.top_models;
  const board = (await g.call("GET", "/v1/stats/rankings?period=daily")).body.leaderboard;
  return {
    app: apps.find((a: { app: string }) => a.app === app) as { tokens: number; calls: number } | undefined,
    model: models.find((m: { model: string }) => m.model === MODEL) as { calls: number } | undefined,
    board: board.find((m: { model: string }) => m.model === MODEL) as { tokens: number; calls: number } | undefined,
  };
}

describe(`two sybils and a victim in the public stats (${kind})`, () => {
  test("with the protections off (the old rule), the attacker computes the victim's usage exactly", async () => {
    const g = await gateway({ STATS_MIN_ACCOUNT_AGE_HOURS: "0", STATS_NOISE: "off" });
    const app = `victim-${crypto.randomUUID().slice(0, 8)}`;
    const victim = await account(g, 30);
    await calls(g, victim.key, app, 3, "the victim's private workload");
    const sybils = [await account(g, 0), await account(g, 0)];
    for (const s of sybils) await calls(g, s.key, app, 1, "probe");
    await rolledUp(g);
    const own = await usage(
      g,
      sybils.map((s) => s.id),
      app,
    );
    const truth = await usage(g, [victim.id], app);
    const p = await published(g, app);
    expect(p.app!.tokens - own.tokens).toBe(truth.tokens);
    expect(p.app!.calls - own.calls).toBe(truth.calls);
  });

  test("with the defaults, fresh sybils name nothing, and aged ones cannot compute the victim's usage exactly", async () => {
    const g = await gateway();
    const app = `victim-${crypto.randomUUID().slice(0, 8)}`;
    const victim = await account(g, 30);
    await calls(g, victim.key, app, 3, "the victim's private workload");

    // Two sybils made for the attack: they pay for their calls but are not a week old.
    const fresh = [await account(g, 0), await account(g, 0)];
    for (const s of fresh) await calls(g, s.key, app, 1, "probe");
    await rolledUp(g);
    let p = await published(g, app);
    expect(p.app).toBeUndefined();
    expect(p.model).toBeUndefined();
    expect(p.board).toBeUndefined();

    // An attacker who made their sybils a week ahead meets the threshold: the names show, blurred.
    const aged = [await account(g, 8), await account(g, 8)];
    for (const s of aged) await calls(g, s.key, app, 1, "probe");
    await rolledUp(g);
    p = await published(g, app);
    expect(p.app).toBeDefined();
    const own = await usage(
      g,
      [...fresh, ...aged].map((s) => s.id),
      app,
    );
    const truth = await usage(g, [victim.id], app);
    const guessTokens = p.app!.tokens - own.tokens;
    const guessCalls = p.app!.calls - own.calls;
    // Not the victim's figures, and not one constant away from them across figures: each is
    // blurred by its own keyed offset (tokens within 2,000, calls within 20).
    expect([guessTokens, guessCalls, p.board!.tokens - own.tokens]).not.toEqual([
      truth.tokens,
      truth.calls,
      truth.tokens,
    ]);
    expect(Math.abs(guessTokens - truth.tokens)).toBeLessThanOrEqual(2_000);
    expect(Math.abs(guessCalls - truth.calls)).toBeLessThanOrEqual(20);
    // Asking again gives the same figures: nothing averages out.
    expect(await published(g, app)).toEqual(p);
  });
});
