/**
 * Issue 31 D and E in Chromium: the overview's charts read at a glance (the window fitted to a
 * new account's data, legends with values without hovering, per model and per key, latency per
 * modality, time to first token), activity at 1440 px (columns fit, search by request id, the
 * detail's attempt trail and policy decision), and the main pages at 390×844 (nothing wider
 * than the screen, the navigation folded behind a Menu button).
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from "bun:test";
import { startTestGateway, type TestGateway, type TestUser } from "../harness";
import { chromiumAvailable, openBrowser, watchErrors, type Browser } from "./browser";
import { signIn } from "./signin";
import type { Page } from "playwright-core";

setDefaultTimeout(90_000);
declare const document: any;

const day = (offset: number) => new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10);

describe.skipIf(!chromiumAvailable())("charts, activity and a phone (issue 31 D, E)", () => {
  let g: TestGateway;
  let browser: Browser;
  let page: Page;
  let errors: string[];
  let u: TestUser;
  let fellBack: string;
  let slug: string;
  beforeAll(async () => {
    g = await startTestGateway();
    u = await g.newUser({ creditKrw: 5000 });
    const a = await g.newKey(u, { name: "app server" });
    const b = await g.newKey(u, { name: "batch job" });
    const chat = async (key: string, model: string, content: string, stream = false) => {
      const r = await g.call("POST", "/v1/chat/completions", {
        token: key,
        body: { model, stream, messages: [{ role: "user", content }] },
      });
      if (r.status !== 200) throw new Error(`chat ${r.status} ${JSON.stringify(r.body)}`);
      return r.headers.get("x-request-id")!;
    };
    await chat(a.key, "gpt-4o-mini", "hello");
    await chat(a.key, "gpt-4o-mini", "streamed hello", true);
    await chat(b.key, "claude-haiku-4-5", "batch work");
    await chat(b.key, "gpt-4o-mini", "flaky [sim:fail=503x2]");
    const policy = await g.call("POST", "/v1/routing-policies", {
      token: u.jwt,
      body: {
        slug: `fb-${crypto.randomUUID().slice(0, 8)}`,
        display_name: "fallback",
        policy_type: "fallback",
        entries: [{ model: "gpt-4o-mini", retries: 2 }, { model: "claude-haiku-4-5" }],
      },
    });
    expect(policy.status).toBe(201);
    slug = policy.body.slug;
    g.gw.sim!.reset();
    fellBack = await chat(a.key, `orch/${slug}`, "down [sim:fail@openai=503]");
    await g.gw.settlements.quiesce();
    browser = await openBrowser({ locale: "en-US", viewport: { width: 1440, height: 900 } });
    page = await browser.context.newPage();
    errors = watchErrors(page);
    await signIn(page, g, u);
  }, 90_000);
  afterAll(async () => {
    await browser?.close();
    await g?.stop();
  });
  const nav = (p: Page, name: string) => p.getByRole("navigation").getByRole("link", { name, exact: true }).click();

  test("a new account's window starts a week back, not thirty days of empty bars", async () => {
    await page.locator("figure.chart canvas").first().waitFor();
    expect(await page.getByRole("heading", { level: 2 }).first().textContent()).toBe(
      `${day(-6)} to today (UTC), from the account's first call`,
    );
  });

  test("legends show each model's and key's total without hovering, as the tables do", async () => {
    const legend = async (title: string) =>
      page
        .locator("figure.chart", { hasText: title })
        .getByTestId("legend")
        .locator("li")
        .evaluateAll((lis: any[]) =>
          Object.fromEntries(
            lis.map((li) => [li.querySelector(".label").textContent, li.querySelector("b").textContent]),
          ),
        );
    const table = async (id: string) =>
      page
        .getByTestId(id)
        .locator("tbody tr")
        .evaluateAll((trs: any[]) =>
          Object.fromEntries(
            trs.map((tr) => [tr.querySelector("th").textContent, tr.querySelector("[data-cost]").textContent]),
          ),
        );
    const models = await legend("By model · Spend (KRW)");
    expect(Object.keys(models).sort()).toEqual(["claude-haiku-4-5", "gpt-4o-mini"]);
    expect(models).toEqual(await table("by-model"));
    const keys = await legend("By key · Spend (KRW)");
    expect(Object.keys(keys).sort()).toEqual(["app server", "batch job"]);
    expect(keys).toEqual(await table("by-key"));
    // Requests: the switch redraws both charts with counts.
    await page.getByLabel("Requests", { exact: true }).check();
    expect(await legend("By key · Requests")).toEqual({ "app server": "3", "batch job": "2" });
    const text = await page.locator("main").textContent();
    expect(text).not.toContain("--");
  });

  test("latency per modality on its own chart, and time to first token", async () => {
    const titles = await page.locator("figure.chart figcaption").allTextContents();
    expect(titles).toContain("Time to first token p50 / p95 (streamed chat)");
    expect(titles.filter((t) => t.startsWith("Latency p50 / p95: "))).toEqual(["Latency p50 / p95: text"]);
    const ttft = page.locator("figure.chart", { hasText: "Time to first token" }).locator("b[data-value]");
    expect(await ttft.first().textContent()).toMatch(/^\d[\d,]* ms$/);
  });

  test("activity fits 1440 px, finds a request by id and shows its attempt trail", async () => {
    await nav(page, "Activity");
    await page.locator("table.activity tbody tr").nth(4).waitFor();
    const fit = await page.evaluate(() => {
      const box = document.querySelector("table.activity").parentElement;
      return { table: box.scrollWidth, box: box.clientWidth, page: document.documentElement.scrollWidth };
    });
    expect(fit.table).toBeLessThanOrEqual(fit.box);
    expect(fit.page).toBeLessThanOrEqual(1440);
    await page.getByLabel("Request id").fill(fellBack);
    await page.getByRole("button", { name: "Apply" }).click();
    await page.locator("table.activity tbody tr").nth(1).waitFor({ state: "detached" });
    expect(await page.locator("table.activity tbody tr").count()).toBe(1);
    await page.getByRole("button", { name: `Details ${fellBack}` }).click();
    const rows = page.getByTestId("attempts").locator("tbody tr");
    await rows.first().waitFor();
    const trail = await rows.evaluateAll((trs: any[]) =>
      trs.map((tr) => [...tr.querySelectorAll("td")].map((td: any) => td.textContent)),
    );
    expect(trail.map((r) => r[2])).toEqual(["retry", "retry", "fallback", "ok"]);
    expect(trail[0]![1]).toContain("openai");
    expect(trail[3]![1]).toContain("anthropic");
    expect(trail[0]![3]).toContain("HTTP 503");
    for (const r of trail) expect(r[4]).toMatch(/^\d[\d,]* ms$/);
    expect(await page.getByTestId("policy-decision").textContent()).toContain(slug);
    await page.locator("dialog").getByRole("button", { name: "Close" }).click();
  });

  test("at 390×844 nothing is wider than the screen and the menu folds", async () => {
    const phone = await openBrowser({ locale: "en-US", viewport: { width: 390, height: 844 } });
    try {
      const p = await phone.context.newPage();
      watchErrors(p, errors);
      await signIn(p, g, u);
      const link = p.getByRole("navigation").getByRole("link", { name: "Activity", exact: true });
      expect(await link.isVisible()).toBe(false);
      const menu = p.getByRole("button", { name: "Menu" });
      expect(await menu.getAttribute("aria-expanded")).toBe("false");
      for (const [name, ready] of [
        ["Rankings", "figure.chart"],
        ["Models", "table"],
        ["Overview", "figure.chart canvas"],
        ["API keys", "table"],
        ["Activity", "table.activity tbody tr"],
        ["Routing policies", "h1"],
        ["Video jobs", "h1"],
        ["Playground", "h1"],
      ] as const) {
        await menu.click();
        await link.waitFor();
        const target = p.getByRole("navigation").getByRole("link", { name, exact: true });
        const href = (await target.getAttribute("href"))!;
        await target.click();
        // The page drawn is the one followed (another page's h1 may still be on screen for a moment).
        await p.waitForFunction((h) => (globalThis as any).location.hash === h, href);
        await p.locator(ready).first().waitFor();
        // Following a link folds the menu again.
        await link.waitFor({ state: "hidden", timeout: 5_000 });
        const wide = await p.evaluate(() => document.documentElement.scrollWidth);
        expect([name, wide]).toEqual([name, 390]);
      }
    } finally {
      await phone.close();
    }
  });

  test("no script error", () => {
    expect(errors).toEqual([]);
  });
});
