/**
 * Writes the README's console screenshots to docs/images/ (`npm run console:screenshots`):
 * a gateway on PGlite with some traffic, the pages in Chromium at 1280×800, one in dark mode
 * and one on a phone. In English: a machine without Korean fonts would draw the Korean as boxes.
 */
import { join } from "node:path";
import { startTestGateway } from "../harness";
import { fastUser, within } from "../support/http";
import { chromiumAvailable, openBrowser } from "./browser";

if (!chromiumAvailable()) process.exit(1);
const OUT = join(import.meta.dir, "../../docs/images");
const g = await startTestGateway({
  env: { DEMO_MODE: "true", STATS_MIN_DISTINCT_ACCOUNTS: "1", VIDEO_POLL_INITIAL_MS: "30", VIDEO_POLL_MAX_MS: "80" },
});
const u = await fastUser(g, { creditKrw: 50_000 });
const keys = [
  await g.newKey(u, { name: "backend", monthly_budget_krw: 20_000 }),
  await g.newKey(u, { name: "batch jobs" }),
];
const models = ["gpt-4o-mini", "claude-haiku-4-5", "gemini-2.5-flash", "deepseek-v3", "gpt-4o-mini"];
for (let i = 0; i < 24; i++) {
  const body = {
    model: models[i % models.length],
    stream: i % 3 === 0,
    messages: [{ role: "user", content: "Summarise the news ".repeat(1 + (i % 5)) }],
    max_tokens: 40 + 10 * (i % 7),
  };
  await g.call("POST", "/v1/chat/completions", {
    token: keys[i % 2].key,
    headers: { "x-title": ["docs-bot", "support-agent", "etl"][i % 3]! },
    body,
  });
}
await within(20_000, async () => (await g.call("GET", "/v1/stats/rankings")).body.leaderboard.length >= 4, 250);
await g.call("POST", "/v1/routing-policies", {
  token: u.jwt,
  body: {
    slug: "cheap-first",
    display_name: "Cheap first",
    policy_type: "fallback",
    entries: [{ model: "gpt-4o-mini" }, { model: "claude-haiku-4-5" }],
  },
});
for (const prompt of ["a paper boat on a river [sim:video_ms=50]", "a lighthouse at dusk [sim:video_ms=60000]"]) {
  await g.call("POST", "/v1/video/generations", {
    token: keys[0].key,
    body: { model: "veo-3", duration_seconds: 4, prompt },
  });
}
// A top-up bought through the simulator's checkout, for the billing page's history.
{
  const c = (await g.call("POST", "/v1/billing/checkout", { token: u.jwt, body: { amount_krw: 20_000 } })).body;
  const paid = await fetch(`${c.checkout.url}/pay`, {
    method: "POST",
    body: new URLSearchParams({ card: "4242" }),
    redirect: "manual",
  });
  await fetch(paid.headers.get("location")!, { redirect: "manual" });
}
await Bun.sleep(1500);
/** `SHOTS=billing,billing-dark` writes only those (the others stay as committed). */
const only = process.env.SHOTS?.split(",");

async function shoot(name: string, route: string, opts: Parameters<typeof openBrowser>[0] = {}, signIn = false) {
  if (only && !only.includes(name)) return;
  const b = await openBrowser({ locale: "en-US", viewport: { width: 1280, height: 800 }, ...opts });
  const page = await b.context.newPage();
  await page.goto(g.url + "/#/sign-in");
  if (signIn) {
    await page.locator('input[name="email"]').fill(u.email);
    await page.locator('input[name="password"]').fill(u.password);
    await page.locator('button[type="submit"]').click();
    await page.locator("dl.cards").waitFor();
  }
  await page.goto(g.url + "/#" + route);
  await page.waitForTimeout(800);
  await page.screenshot({ path: join(OUT, `console-${name}.png`), fullPage: false });
  await b.close();
}

await shoot("rankings", "/rankings");
await shoot("models", "/models");
await shoot("overview", "/overview", {}, true);
await shoot("keys", "/keys", {}, true);
await shoot("activity", "/activity", {}, true);
await shoot("policies", "/policies", {}, true);
await shoot("video", "/video", {}, true);
await shoot("operator", "/operator");
await shoot("overview-dark", "/overview", { colorScheme: "dark" }, true);
await shoot("rankings-phone", "/rankings", { viewport: { width: 390, height: 844 } });
await shoot("billing", "/billing", {}, true);
await shoot("billing-dark", "/billing", { colorScheme: "dark" }, true);
await shoot("billing-phone", "/billing", { viewport: { width: 390, height: 844 } }, true);
await g.stop();
console.log(`screenshots written to ${OUT}`);
