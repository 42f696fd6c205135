/**
 * The console's public pages and sign-in in a real Chromium: rankings drawn as charts from the
 * public stats, the model catalog searchable with KRW and USD prices, Korean by default and
 * English by the browser's language or the switch, dark mode, a phone layout, and sign up, in
 * and out with the token kept out of storage. No page reports a script error.
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from "bun:test";
import { startTestGateway, type TestGateway } from "../harness";
import { fastUser } from "../support/http";
import { within } from "../support/http";
import { chromiumAvailable, openBrowser, watchErrors, type Browser } from "./browser";

setDefaultTimeout(60_000);
// Functions passed to page.evaluate run in the page; the test project has no DOM types.
declare const document: any, localStorage: any, sessionStorage: any;
type HTMLCanvasElement = any;

describe.skipIf(!chromiumAvailable())("console public pages in Chromium", () => {
  let g: TestGateway;
  let browser: Browser;
  beforeAll(async () => {
    // Demo mode's stats settings: every account counts, rollups each second, 2 s cache.
    g = await startTestGateway({ env: { DEMO_MODE: "true", STATS_MIN_DISTINCT_ACCOUNTS: "1" } });
    const u = await fastUser(g, { creditKrw: 10_000 });
    const key = await g.newKey(u);
    for (const model of ["gpt-4o-mini", "gpt-4o-mini", "claude-haiku-4-5", "gemini-2.5-flash"]) {
      const r = await g.call("POST", "/v1/chat/completions", {
        token: key.key,
        headers: { "x-title": "rank-app" },
        body: { model, messages: [{ role: "user", content: "hello" }], max_tokens: 16 },
      });
      expect(r.status).toBe(200);
    }
    const ready = await within(
      20_000,
      async () => {
        const [r, a] = await Promise.all([g.call("GET", "/v1/stats/rankings"), g.call("GET", "/v1/stats/apps")]);
        return r.body.leaderboard.length === 3 && a.body.apps.length === 1;
      },
      250,
    );
    expect(ready).not.toBeNull();
    browser = await openBrowser();
  }, 90_000);
  afterAll(async () => {
    await browser?.close();
    await g?.stop();
  });

  test("rankings: Korean by default, leaderboard, share and usage charts drawn, apps", async () => {
    const page = await browser.context.newPage();
    const errors = watchErrors(page);
    await page.goto(g.url + "/");
    await page.getByRole("heading", { level: 1, name: "모델 랭킹" }).waitFor();
    expect(await page.evaluate(() => document.documentElement.lang)).toBe("ko");
    await page.locator("table >> text=gpt-4o-mini").first().waitFor();
    await page.locator("figure.chart canvas").nth(1).waitFor();
    expect(await page.locator("figure.chart canvas").count()).toBe(2);
    // A drawn chart has coloured pixels, not a blank canvas.
    const inked = await page.evaluate(() =>
      [...document.querySelectorAll("figure.chart canvas")].map((c) => {
        const cv = c as HTMLCanvasElement;
        const px = cv.getContext("2d")!.getImageData(0, 0, cv.width, cv.height).data;
        let n = 0;
        for (let i = 0; i < px.length; i += 4)
          if (px[i + 3]! > 0 && !(px[i] === px[i + 1] && px[i + 1] === px[i + 2])) n++;
        return n;
      }),
    );
    for (const n of inked) expect(n).toBeGreaterThan(100);
    await page.locator("td", { hasText: "rank-app" }).waitFor();
    await page.getByLabel("상위 N").selectOption("3");
    await page.getByLabel("단위").selectOption("week");
    await page.locator("figure.chart canvas").nth(1).waitFor();
    expect(errors).toEqual([]);
    await page.close();
  });

  test("the language and theme switches; English when the browser prefers it", async () => {
    // Its own profile: the choices it makes are remembered (localStorage) and would leak into the other tests.
    const own = await openBrowser();
    const page = await own.context.newPage();
    const errors = watchErrors(page);
    await page.goto(g.url + "/#/rankings");
    await page.getByLabel("언어").selectOption("en");
    await page.getByRole("heading", { level: 1, name: "Model rankings" }).waitFor();
    await page.getByRole("button", { name: "Dark" }).click();
    expect(await page.evaluate(() => document.documentElement.dataset.theme)).toBe("dark");
    await own.close();
    const en = await openBrowser({ locale: "en-US", colorScheme: "dark" });
    const p2 = await en.context.newPage();
    await p2.goto(g.url + "/");
    await p2.getByRole("heading", { level: 1, name: "Model rankings" }).waitFor();
    expect(await p2.evaluate(() => document.documentElement.dataset.theme)).toBe("dark");
    await en.close();
    expect(errors).toEqual([]);
  });

  test("models: the catalog with prices in USD and KRW, searchable", async () => {
    const page = await browser.context.newPage();
    const errors = watchErrors(page);
    await page.goto(g.url + "/#/models");
    await page.getByRole("heading", { level: 1, name: "모델 카탈로그" }).waitFor();
    await page.locator("code", { hasText: "gpt-4o-mini" }).first().waitFor();
    const row = page.locator("tr", { has: page.locator("code", { hasText: /^gpt-4o-mini$/ }) }).first();
    expect(await row.textContent()).toMatch(/\$0\.15 · ₩210/);
    await page.getByLabel("검색").fill("claude");
    await page.locator("code", { hasText: "gpt-4o-mini" }).first().waitFor({ state: "detached" });
    expect(await page.locator("code", { hasText: "claude" }).count()).toBeGreaterThan(0);
    expect(errors).toEqual([]);
    await page.close();
  });

  test("sign up, sign in, sign out: the token never reaches storage", async () => {
    const page = await browser.context.newPage();
    const errors = watchErrors(page);
    const email = `ui${crypto.randomUUID().slice(0, 8)}@test.example`;
    await page.goto(g.url + "/#/sign-in");
    await page.getByRole("button", { name: "계정이 없나요? 가입" }).click();
    await page.getByLabel("이메일").fill(email);
    await page.getByLabel("비밀번호").fill("console-password-1");
    await page.getByRole("button", { name: "가입하기" }).click();
    await page.getByRole("status").filter({ hasText: "가입했습니다" }).waitFor();
    await page.getByRole("button", { name: "로그인", exact: true }).click();
    await page.getByRole("button", { name: "로그아웃" }).waitFor();
    const stored = await page.evaluate(
      () => JSON.stringify({ ...localStorage }) + JSON.stringify({ ...sessionStorage }) + document.cookie,
    );
    expect(stored).not.toMatch(/eyJ/);
    await page.getByRole("button", { name: "로그아웃" }).click();
    await page.getByRole("link", { name: "로그인" }).waitFor();
    expect(errors).toEqual([]);
    await page.close();
  });

  test("by keyboard: the skip link moves focus to the page, the navigation is reachable by Tab", async () => {
    const page = await browser.context.newPage();
    await page.goto(g.url + "/#/models");
    await page.getByRole("heading", { level: 1 }).waitFor();
    await page.keyboard.press("Tab");
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe("본문으로 건너뛰기");
    await page.keyboard.press("Enter");
    expect(await page.evaluate(() => document.activeElement?.id)).toBe("main");
    // From the top again: Tab walks the header's links, the language switch and the buttons.
    await page.reload();
    await page.getByRole("heading", { level: 1 }).waitFor();
    const tags: string[] = [];
    for (let i = 0; i < 12; i++) {
      await page.keyboard.press("Tab");
      tags.push(
        await page.evaluate(
          () => `${document.activeElement?.tagName}:${document.activeElement?.textContent?.trim().slice(0, 12)}`,
        ),
      );
    }
    expect(tags).toContain("A:랭킹");
    expect(tags.some((t) => t.startsWith("SELECT"))).toBe(true);
    expect(tags.some((t) => t.startsWith("BUTTON"))).toBe(true);
    await page.close();
  });

  test("a phone: nothing wider than the screen", async () => {
    const phone = await openBrowser({ viewport: { width: 375, height: 740 } });
    const page = await phone.context.newPage();
    await page.goto(g.url + "/");
    await page.locator("figure.chart canvas").nth(1).waitFor();
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(375);
    await phone.close();
  });
});
