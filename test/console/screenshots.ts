/**
 * Writes the console's screenshots to docs/images/ (`npm run console:screenshots`): a gateway
 * on PGlite with some traffic (spread over the last ten days, a retried call and one through a
 * fallback policy), every page in Chromium in light and dark at 1440×900 and 390×844, named
 * `console-<page>-<theme>-<desktop|phone>.png`, plus the activity detail's attempt trail. In
 * English: a machine without Korean fonts would draw the Korean as boxes.
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
// A retried call and one that fell back through the policy: the activity detail's trail.
await g.call("POST", "/v1/chat/completions", {
  token: keys[1].key,
  body: { model: "gpt-4o-mini", messages: [{ role: "user", content: "flaky [sim:fail=503x2]" }] },
});
const fellBack = await g.call("POST", "/v1/chat/completions", {
  token: keys[0].key,
  body: { model: "orch/cheap-first", messages: [{ role: "user", content: "down [sim:fail@openai=503]" }] },
});
await Bun.sleep(1500);
await g.gw.settlements.quiesce();
// Spread the calls over the last ten days, as an account a week old has them (screenshots only).
await g.gw.deps.db.query(
  "update usage_events set created_at = created_at - ((id % 10) || ' days')::interval where user_id = $1 and request_id <> $2",
  [u.id, fellBack.headers.get("x-request-id")],
);

const PAGES = [
  ["rankings", "/rankings", false],
  ["models", "/models", false],
  ["sign-in", "/sign-in", false],
  ["overview", "/overview", true],
  ["keys", "/keys", true],
  ["management-keys", "/management-keys", true],
  ["activity", "/activity", true],
  ["policies", "/policies", true],
  ["video", "/video", true],
  ["playground", "/playground", true],
  ["billing", "/billing", true],
  ["operator", "/operator", false],
] as const;
const SIZES = { desktop: { width: 1440, height: 900 }, phone: { width: 390, height: 844 } } as const;

for (const theme of ["light", "dark"] as const)
  for (const [size, viewport] of Object.entries(SIZES)) {
    const b = await openBrowser({ locale: "en-US", viewport, colorScheme: theme });
    const page = await b.context.newPage();
    await page.goto(g.url + "/#/sign-in");
    await page.locator('input[name="email"]').fill(u.email);
    await page.locator('input[name="password"]').fill(u.password);
    await page.locator('form button[type="submit"]').click();
    await page.locator("dl.cards").waitFor();
    const file = (name: string) => join(OUT, `console-${name}-${theme}-${size}.png`);
    for (const [name, route] of PAGES) {
      await page.goto(g.url + "/#" + route);
      if (name === "playground") {
        // An answer with its stats line (its cost read back from the ledger).
        await page.getByRole("button", { name: "Create the playground key" }).click();
        await page.getByLabel("Message").fill("Write one sentence about the Han river.");
        await page.getByRole("button", { name: "Send" }).click();
        await page.getByTestId("answer-stats").waitFor();
      }
      await page.waitForTimeout(700);
      // The overview whole (its charts are the point); the others as a screen shows them.
      await page.screenshot({ path: file(name), fullPage: name === "overview" });
    }
    if (size === "phone") {
      await page.getByRole("button", { name: "Menu" }).click();
      await page.screenshot({ path: file("menu") });
      await page.getByRole("button", { name: "Menu" }).click();
    }
    await page.goto(g.url + "/#/activity");
    const id = fellBack.headers.get("x-request-id")!;
    await page.getByRole("button", { name: `Details ${id}` }).click();
    await page.getByTestId("attempts").waitFor();
    await page.screenshot({ path: file("activity-detail") });
    await b.close();
  }
await g.stop();
console.log(`screenshots written to ${OUT}`);
