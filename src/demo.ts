/**
 * Demo mode's first start: a funded demo account and one API key, printed with the admin
 * token and a ready curl line. Runs once per data directory (the account marks it).
 */
import type { Gateway } from "./gateway";
import { issueApiKey } from "./http/key-records";
import { krwToMicro } from "./lib/money";
import { randomToken } from "./lib/secrets";

const DEMO_EMAIL = "demo@gateway.local";
const DEMO_CREDIT_KRW = 100_000;

export interface DemoSeed {
  email: string;
  password: string;
  apiKey: string;
}

/** Creates the demo account on first start; null when it already exists. */
export async function seedDemo(gw: Gateway): Promise<DemoSeed | null> {
  const { users, keys } = gw.deps;
  if (await users.byEmail(DEMO_EMAIL)) return null;
  const password = randomToken(16);
  const user = await users.create({
    email: DEMO_EMAIL,
    passwordHash: await Bun.password.hash(password, { algorithm: "argon2id" }),
    industry: "general",
    regulated: false,
  });
  if (!user) return null;
  await users.topup(user.id, krwToMicro(BigInt(DEMO_CREDIT_KRW)), { demo: true });
  const key = await issueApiKey(keys, { userId: user.id, kind: "standard", name: "demo" });
  return { email: DEMO_EMAIL, password, apiKey: key.key! };
}

export function demoBanner(
  base: string,
  seed: DemoSeed | null,
  adminToken: string | null,
  simulated: string[],
): string {
  const lines = [
    "",
    `  Model gateway (demo mode) listening on ${base}`,
    `  Providers served by the built-in simulator: ${simulated.join(", ") || "none"}`,
    `  Console: ${base}/   API docs: ${base}/docs   metrics: ${base}/metrics (with the admin token)`,
    adminToken ? `  Admin token: ${adminToken}` : "",
  ];
  if (seed) {
    lines.push(
      `  Demo account: ${seed.email} / ${seed.password} (${DEMO_CREDIT_KRW.toLocaleString("en")} KRW)`,
      `  Demo API key (shown once): ${seed.apiKey}`,
      "",
      `  curl ${base}/v1/chat/completions -H "Authorization: Bearer ${seed.apiKey}" -H "Content-Type: application/json" \\`,
      `    -d '{"model":"gpt-4o-mini","messages":[{"role":"user","content":"Hello!"}]}'`,
    );
  } else {
    lines.push(`  Demo account ${DEMO_EMAIL} exists already (its key was printed on the first start).`);
  }
  return lines.filter((l, i) => l !== "" || i === 0).join("\n") + "\n";
}
