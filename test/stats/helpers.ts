/**
 * Usage events for the statistics tests: generated traffic written straight into
 * usage_events (as gw_settle would), and reference aggregates computed from the same events
 * in TypeScript, independently of the rollup SQL.
 */
import type { Database } from "../../src/db/client";

export interface Ev {
  user: string;
  key: string | null;
  model: string;
  provider: string | null;
  maker: string | null;
  modality: string;
  app: string | null;
  status: number;
  prompt: number;
  completion: number;
  costMicro: number;
  cached: boolean;
  at: Date;
}

/** Deterministic pseudo-random numbers (mulberry32), so a failure can be replayed. */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const pick = <T>(r: () => number, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;

export const MODELS = [
  "gpt-4o-mini",
  "gpt-4o",
  "claude-3-5-sonnet",
  "gemini-2.0-flash",
  "deepseek-chat",
  "llama-3.3-70b",
  "qwen-2.5",
  "mistral-large",
];
const MAKER: Record<string, string | null> = {
  "gpt-4o-mini": "openai",
  "gpt-4o": "openai",
  "claude-3-5-sonnet": "anthropic",
  "gemini-2.0-flash": "google",
  "deepseek-chat": "deepseek",
  "llama-3.3-70b": "meta",
  "qwen-2.5": null,
  "mistral-large": "mistral",
};
const PROVIDERS = ["openai", "anthropic", "google", "together", "groq"];

/** `n` random events with created_at uniformly in [from, to). */
export function randomEvents(
  n: number,
  r: () => number,
  from: Date,
  to: Date,
  o: { users: string[]; keys: string[] },
): Ev[] {
  const out: Ev[] = [];
  for (let i = 0; i < n; i++) {
    const model = pick(r, MODELS);
    const fail = r() < 0.12;
    const cached = !fail && r() < 0.06;
    out.push({
      user: pick(r, o.users),
      key: r() < 0.05 ? null : pick(r, o.keys),
      model,
      provider: fail && r() < 0.5 ? null : pick(r, PROVIDERS),
      maker: MAKER[model]!,
      modality: r() < 0.85 ? "text" : pick(r, ["embedding", "image"]),
      app: r() < 0.3 ? null : pick(r, ["chatbox", "cursor", "openwebui.example", "my-agent", "n8n", "sillytavern"]),
      status: fail ? pick(r, [400, 402, 429, 499, 502, 503]) : 200,
      prompt: Math.floor(r() * 2000),
      completion: fail && r() < 0.7 ? 0 : Math.floor(r() * 800),
      costMicro: fail ? 0 : Math.floor(r() * 5_000_000),
      cached,
      at: new Date(from.getTime() + Math.floor(r() * (to.getTime() - from.getTime()))),
    });
  }
  return out;
}

/** Writes events in chunks, one statement per chunk. */
export async function insertEvents(db: Database, events: Ev[]): Promise<void> {
  for (let i = 0; i < events.length; i += 1000) {
    const chunk = events.slice(i, i + 1000).map((e) => ({
      user_id: e.user,
      key_id: e.key,
      model: e.model,
      provider: e.provider,
      maker: e.maker,
      modality: e.modality,
      app: e.app,
      status: e.status,
      prompt_tokens: e.prompt,
      completion_tokens: e.completion,
      cost_micro: e.costMicro,
      cached: e.cached,
      created_at: e.at.toISOString(),
    }));
    await db.query(
      `insert into usage_events (request_id, user_id, key_id, model, provider, maker, modality, app, status, prompt_tokens, completion_tokens, cost_micro, cached, created_at)
       select gen_random_uuid(), user_id, key_id, model, provider, maker, modality, app, status, prompt_tokens, completion_tokens, cost_micro, cached, created_at
         from jsonb_to_recordset($1::jsonb) as x(user_id uuid, key_id uuid, model text, provider text, maker text, modality text, app text,
              status int, prompt_tokens int, completion_tokens int, cost_micro bigint, cached boolean, created_at timestamptz)`,
      [JSON.stringify(chunk)],
    );
  }
}

export const hourOf = (t: Date) => new Date(Math.floor(t.getTime() / 3_600_000) * 3_600_000).toISOString();
export const dayOf = (t: Date) => new Date(Math.floor(t.getTime() / 86_400_000) * 86_400_000).toISOString();
/** Tokens as the public statistics count them: not for cache hits. */
export const tokensOf = (e: Ev) => (e.cached ? 0 : e.prompt + e.completion);

/** Reference rows of stats_model_{hourly,daily} as sorted strings. */
export function expectedModelRows(events: Ev[], bucketOf: (t: Date) => string): string[] {
  const m = new Map<string, number[]>();
  for (const e of events) {
    const k = [bucketOf(e.at), e.model, e.provider ?? "", e.maker ?? "", e.modality, e.status < 400].join("|");
    const v = m.get(k) ?? [0, 0, 0, 0, 0];
    v[0]! += 1;
    v[1]! += e.cached ? 1 : 0;
    v[2]! += e.cached ? 0 : e.prompt;
    v[3]! += e.cached ? 0 : e.completion;
    v[4]! += e.costMicro;
    m.set(k, v);
  }
  return [...m].map(([k, v]) => `${k}|${v.join("|")}`).sort();
}

export function expectedAppRows(events: Ev[], bucketOf: (t: Date) => string): string[] {
  const m = new Map<string, number[]>();
  for (const e of events) {
    if (e.app === null) continue;
    const k = [bucketOf(e.at), e.app, e.modality, e.status < 400].join("|");
    const v = m.get(k) ?? [0, 0, 0, 0];
    v[0]! += 1;
    v[1]! += e.cached ? 1 : 0;
    v[2]! += e.cached ? 0 : e.prompt;
    v[3]! += e.cached ? 0 : e.completion;
    m.set(k, v);
  }
  return [...m].map(([k, v]) => `${k}|${v.join("|")}`).sort();
}

export function expectedDailyUsage(events: Ev[]): string[] {
  const m = new Map<string, number[]>();
  for (const e of events) {
    const k = [e.user, dayOf(e.at).slice(0, 10), e.model].join("|");
    const v = m.get(k) ?? [0, 0, 0, 0, 0, 0];
    v[0]! += 1;
    v[1]! += e.status >= 400 ? 1 : 0;
    v[2]! += e.cached ? 1 : 0;
    v[3]! += e.cached ? 0 : e.prompt;
    v[4]! += e.cached ? 0 : e.completion;
    v[5]! += e.costMicro;
    m.set(k, v);
  }
  return [...m].map(([k, v]) => `${k}|${v.join("|")}`).sort();
}

/**
 * Distinct accounts per (bucket, dim, name); calls without a key count for their account too.
 * Only answered, uncached, charged calls make an account count (docs/stats.md, "Who counts").
 */
export function expectedAccountSets(events: Ev[], bucketOf: (t: Date) => string): Map<string, Set<string>> {
  const m = new Map<string, Set<string>>();
  const add = (k: string, account: string) => (m.get(k) ?? m.set(k, new Set()).get(k)!).add(account);
  for (const e of events) {
    if (e.status >= 400 || e.cached || e.costMicro <= 0) continue;
    add([bucketOf(e.at), "model", e.model].join("|"), e.user);
    if (e.app) add([bucketOf(e.at), "app", e.app].join("|"), e.user);
  }
  return m;
}

export async function modelRows(db: Database, table: string): Promise<string[]> {
  const rows = await db.query<Record<string, unknown>>(
    `select bucket, model, provider, maker, modality, success, calls::text, cache_hits::text, prompt_tokens::text, completion_tokens::text, cost_micro::text from ${table}`,
  );
  return rows
    .map((r) =>
      [
        new Date(r.bucket as string).toISOString(),
        r.model,
        r.provider,
        r.maker,
        r.modality,
        r.success,
        r.calls,
        r.cache_hits,
        r.prompt_tokens,
        r.completion_tokens,
        r.cost_micro,
      ].join("|"),
    )
    .sort();
}

export async function appRows(db: Database, table: string): Promise<string[]> {
  const rows = await db.query<Record<string, unknown>>(
    `select bucket, app, modality, success, calls::text, cache_hits::text, prompt_tokens::text, completion_tokens::text from ${table}`,
  );
  return rows
    .map((r) =>
      [
        new Date(r.bucket as string).toISOString(),
        r.app,
        r.modality,
        r.success,
        r.calls,
        r.cache_hits,
        r.prompt_tokens,
        r.completion_tokens,
      ].join("|"),
    )
    .sort();
}

export async function dailyUsageRows(db: Database): Promise<string[]> {
  const rows = await db.query<Record<string, unknown>>(
    `select user_id, day::text as day, model, requests::text, failed_requests::text, cache_hits::text, prompt_tokens::text, completion_tokens::text, cost_micro::text from usage_daily`,
  );
  return rows
    .map((r) =>
      [
        r.user_id,
        r.day,
        r.model,
        r.requests,
        r.failed_requests,
        r.cache_hits,
        r.prompt_tokens,
        r.completion_tokens,
        r.cost_micro,
      ].join("|"),
    )
    .sort();
}

export async function accountRows(db: Database, table: string): Promise<Map<string, string[]>> {
  const rows = await db.query<Record<string, unknown>>(`select bucket, dim, name, account_id from ${table}`);
  const m = new Map<string, string[]>();
  for (const r of rows) {
    const k = [new Date(r.bucket as string).toISOString(), r.dim, r.name].join("|");
    (m.get(k) ?? m.set(k, []).get(k)!).push(String(r.account_id));
  }
  return m;
}
