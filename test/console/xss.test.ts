/**
 * Everything users or clients wrote is shown as text: a key name, an app name sent as X-Title
 * (in activity and in the public apps ranking), a policy name, a video prompt and a playground
 * prompt, each an
 * `<img src=x onerror=…>`, appear literally on their pages, and no element or script of theirs
 * ever exists or runs.
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from "bun:test";
import { startTestGateway, type TestGateway, type TestUser } from "../harness";
import { fastUser, within } from "../support/http";
import { chromiumAvailable, openBrowser, watchErrors, type Browser } from "./browser";
import type { Page } from "playwright-core";

setDefaultTimeout(60_000);
declare const document: any, window: any;

const PAYLOAD = `<img src=x onerror="window.__xss=(window.__xss||0)+1">`;

describe.skipIf(!chromiumAvailable())("user-written text in the console", () => {
  let g: TestGateway;
  let u: TestUser;
  let browser: Browser;
  let page: Page;
  let errors: string[];
  beforeAll(async () => {
    g = await startTestGateway({ env: { DEMO_MODE: "true", STATS_MIN_DISTINCT_ACCOUNTS: "1" } });
    u = await fastUser(g, { creditKrw: 10_000 });
    const key = await g.newKey(u, { name: PAYLOAD });
    const r = await g.call("POST", "/v1/chat/completions", {
      token: key.key,
      headers: { "x-title": PAYLOAD },
      body: { model: "gpt-4o-mini", messages: [{ role: "user", content: "hi" }], max_tokens: 8 },
    });
    expect(r.status).toBe(200);
    expect(
      await within(20_000, async () => (await g.call("GET", "/v1/stats/apps")).body.apps.length === 1, 250),
    ).not.toBeNull();
    const policy = await g.call("POST", "/v1/routing-policies", {
      token: u.jwt,
      body: { slug: "xss", display_name: PAYLOAD, policy_type: "fallback", entries: [{ model: "gpt-4o-mini" }] },
    });
    expect(policy.status).toBe(201);
    const job = await g.call("POST", "/v1/video/generations", {
      token: key.key,
      body: { model: "veo-3", duration_seconds: 3, prompt: PAYLOAD },
    });
    expect(job.status).toBe(202);
    browser = await openBrowser({ locale: "en-US" });
    page = await browser.context.newPage();
    errors = watchErrors(page);
  }, 90_000);
  afterAll(async () => {
    await browser?.close();
    await g?.stop();
  });

  const injected = () =>
    page.evaluate(() => ({ ran: window.__xss ?? 0, images: document.querySelectorAll('img[src="x"]').length }));

  test("the public apps ranking shows the app name as text", async () => {
    await page.goto(g.url + "/#/rankings");
    await page.locator("td", { hasText: PAYLOAD }).waitFor();
    expect(await injected()).toEqual({ ran: 0, images: 0 });
  });

  test("the key name, the app in activity, a policy name, a video prompt and a playground prompt are text", async () => {
    await page.goto(g.url + "/#/sign-in");
    await page.getByLabel("Email").fill(u.email);
    await page.getByLabel("Password").fill(u.password);
    await page.getByRole("button", { name: "Sign in", exact: true }).click();
    await page.getByRole("heading", { level: 1, name: "Overview" }).waitFor();
    await page.getByRole("link", { name: "API keys" }).click();
    await page.locator("td", { hasText: PAYLOAD }).waitFor();
    expect(await injected()).toEqual({ ran: 0, images: 0 });
    await page.getByRole("link", { name: "Activity" }).click();
    await page.locator("td", { hasText: PAYLOAD }).waitFor();
    await page
      .getByRole("combobox", { name: "Key" })
      .locator("option", { hasText: PAYLOAD })
      .waitFor({ state: "attached" });
    expect(await injected()).toEqual({ ran: 0, images: 0 });
    await page.getByRole("link", { name: "Routing policies" }).click();
    await page.locator("td", { hasText: PAYLOAD }).waitFor();
    await page.getByRole("link", { name: "Video jobs" }).click();
    await page.locator("td", { hasText: PAYLOAD }).waitFor();
    expect(await injected()).toEqual({ ran: 0, images: 0 });
    await page.getByRole("link", { name: "Playground" }).click();
    await page.getByRole("button", { name: "Create the playground key" }).click();
    await page.getByLabel("Message").fill(PAYLOAD);
    await page.getByRole("button", { name: "Send" }).click();
    await page.getByTestId("answer-stats").waitFor();
    await page.locator(".bubble", { hasText: PAYLOAD }).first().waitFor();
    expect(await injected()).toEqual({ ran: 0, images: 0 });
    expect(errors).toEqual([]);
  });
});
