/**
 * A funded account on a gateway running as its own process (test/support/procs.ts): the user row
 * written straight to the database (no sign-up throttle), a dashboard token, an operator
 * top-up through the admin API, and API keys made through the account API.
 */
import type { Database } from "../../src/db/client";
import { UserRepo } from "../../src/db/repos/users";
import { signJwt } from "../../src/lib/jwt";
import { ADMIN_TOKEN } from "../harness";
import { TEST_JWT_SECRET } from "./http";
import { call } from "./procs";

export interface FundedAccount {
  id: string;
  jwt: string;
  keys: string[];
}

export async function fundedAccount(
  db: Database,
  base: string,
  opts: { prefix: string; krw: number; keys?: number; keyName?: string; passwordHash?: string },
): Promise<FundedAccount> {
  const user = (await new UserRepo(db).create({
    email: `${opts.prefix}-${crypto.randomUUID().slice(0, 8)}@test.example`,
    passwordHash: opts.passwordHash ?? "x",
    industry: "general",
    regulated: false,
  }))!;
  const jwt = signJwt({ sub: user.id, typ: "access" }, TEST_JWT_SECRET, 3600);
  const topup = await call(base, "POST", `/v1/admin/users/${user.id}/topups`, {
    token: ADMIN_TOKEN,
    body: { amount_krw: opts.krw },
  });
  if (topup.status !== 201) throw new Error(`top-up answered ${topup.status}: ${JSON.stringify(topup.body)}`);
  const keys: string[] = [];
  for (let i = 0; i < (opts.keys ?? 1); i++) {
    const made = await call(base, "POST", "/v1/keys", { token: jwt, body: opts.keyName ? { name: opts.keyName } : {} });
    if (made.status !== 201) throw new Error(`key creation answered ${made.status}: ${JSON.stringify(made.body)}`);
    keys.push(made.body.key as string);
  }
  return { id: user.id, jwt, keys };
}
