/**
 * Helpers of the routing-policy tests: fast accounts (no argon2 round trips), policies
 * created through the public CRUD, and calls through the official OpenAI SDK.
 */
import OpenAI from "openai";
import { signJwt } from "../../src/lib/jwt";
import type { TestGateway, TestUser } from "../harness";

const PASSWORD = "correct horse battery";
let passwordHash: Promise<string> | null = null;

/** An account inserted through the repository and signed in exactly as login signs. */
export async function quickUser(g: TestGateway, creditKrw = 0): Promise<TestUser> {
  passwordHash ??= Bun.password.hash(PASSWORD, { algorithm: "bcrypt", cost: 4 });
  const email = `r${crypto.randomUUID().slice(0, 12)}@test.example`;
  const row = await g.gw.deps.users.create({
    email,
    passwordHash: await passwordHash,
    industry: "general",
    regulated: false,
  });
  if (!row) throw new Error("quickUser: insert failed");
  if (creditKrw) await g.credit(row.id, creditKrw);
  const jwt = signJwt({ sub: row.id, typ: "access" }, g.gw.deps.jwtSecret, g.gw.deps.config.JWT_TTL_SECONDS);
  return { id: row.id, email, password: PASSWORD, jwt };
}

let slugs = 0;
export const uniqueSlug = (prefix = "p") => `${prefix}-${Date.now().toString(36)}-${(slugs++).toString(36)}`;

/** Creates a policy; throws unless 201. */
export async function createPolicy(g: TestGateway, user: TestUser, body: Record<string, unknown>): Promise<any> {
  const r = await g.call("POST", "/v1/routing-policies", {
    token: user.jwt,
    body: { slug: uniqueSlug(), display_name: "test", ...body },
  });
  if (r.status !== 201) throw new Error(`policy creation failed: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
}

export function client(g: TestGateway, key: { key: string }): OpenAI {
  return new OpenAI({ apiKey: key.key, baseURL: g.url + "/v1", maxRetries: 0 });
}

/** A chat call through the SDK that also returns the response headers. */
export async function chat(c: OpenAI, model: string, content: string, extra: Record<string, unknown> = {}) {
  const { data, response } = await c.chat.completions
    .create({ model, messages: [{ role: "user", content }], ...extra } as any)
    .withResponse();
  return { body: data as any, headers: response.headers };
}

/** Upstream calls the simulator received per provider (all paths), for before/after deltas. */
export function simCalls(g: TestGateway): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [provider, byRoute] of Object.entries(g.gw.sim!.stats().calls))
    out[provider] = Object.values(byRoute).reduce((a, b) => a + b, 0);
  return out;
}

/** Calls per provider between two snapshots. */
export function delta(before: Record<string, number>, after: Record<string, number>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [p, n] of Object.entries(after)) if (n - (before[p] ?? 0) > 0) out[p] = n - (before[p] ?? 0);
  return out;
}

/** The account's balance and held credits in KRW (decimals kept: micro-won precision). */
export async function money(g: TestGateway, user: TestUser): Promise<{ balance: number; held: number }> {
  const r = await g.call("GET", "/v1/me", { token: user.jwt });
  return { balance: r.body.balance_krw, held: r.body.held_krw };
}

/** A chat call over plain HTTP (for error statuses and bodies). */
export function rawChat(
  g: TestGateway,
  key: { key: string },
  model: string,
  content: string,
  extra: Record<string, unknown> = {},
) {
  return g.call("POST", "/v1/chat/completions", {
    token: key.key,
    body: { model, messages: [{ role: "user", content }], ...extra },
  });
}
