/**
 * The signed-in console end to end in Chromium: sign up, credits from the operator page, a key
 * created with its secret shown once, an answer streamed in the playground, that call found
 * in activity with its cost (and in the CSV), the overview's charts drawn with data, a key's
 * budget edited, the key disabled and deleted. The books are checked in SQL. No script error.
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from "bun:test";
import { readFileSync } from "node:fs";
import { ADMIN_TOKEN, startTestGateway, type TestGateway } from "../harness";
import { chromiumAvailable, openBrowser, watchErrors, type Browser } from "./browser";
import type { Page } from "playwright-core";

setDefaultTimeout(60_000);
declare const document: any, sessionStorage: any, localStorage: any;

/** Coloured pixels of each chart canvas on the page: a drawn series has many. */
const inkedCharts = (page: Page) =>
  page.evaluate(() =>
    [...document.querySelectorAll("figure.chart canvas")].map((cv: any) => {
      const px = cv.getContext("2d").getImageData(0, 0, cv.width, cv.height).data;
      let n = 0;
      for (let i = 0; i < px.length; i += 4)
        if (px[i + 3] > 0 && !(px[i] === px[i + 1] && px[i + 1] === px[i + 2])) n++;
      return n;
    }),
  );

describe.skipIf(!chromiumAvailable())("the signed-in console in Chromium", () => {
  let g: TestGateway;
  let browser: Browser;
  let page: Page;
  let errors: string[];
  const email = `e2e${crypto.randomUUID().slice(0, 8)}@test.example`;
  let userId: string;
  beforeAll(async () => {
    g = await startTestGateway();
    browser = await openBrowser({ locale: "en-US" });
    page = await browser.context.newPage();
    errors = watchErrors(page);
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await g?.stop();
  });
  const nav = (name: string) => page.getByRole("navigation").getByRole("link", { name, exact: true }).click();

  test("sign up, receive credits, sign in: the overview shows the balance", async () => {
    await page.goto(g.url + "/#/overview");
    await page.getByRole("button", { name: "No account? Sign up" }).click();
    await page.getByLabel("Email").fill(email);
    await page.getByLabel("Password").fill("e2e-password-1");
    await page.getByRole("button", { name: "Sign up" }).click();
    await page.getByRole("status").filter({ hasText: "Account created" }).waitFor();
    userId = (await g.gw.deps.db.query<{ id: string }>("select id from users where email = $1", [email]))[0]!.id;
    // The operator, in another tab, finds the account and tops it up, seeing the fee first.
    const op = await browser.context.newPage();
    watchErrors(op, errors);
    await op.goto(g.url + "/#/operator");
    await op.getByLabel("Admin token").fill(ADMIN_TOKEN);
    await op.getByRole("button", { name: "Use" }).click();
    await op.getByPlaceholder("Part of an email, or an id").fill(email);
    await op.getByRole("button", { name: "Search", exact: true }).click();
    await op.getByRole("button", { name: `Top up ${email}` }).click();
    await op.getByLabel("Amount paid (KRW)").fill("10000");
    expect(await op.getByTestId("topup-fee").textContent()).toBe("Fee ₩300, credited ₩9,700");
    await op.getByRole("button", { name: "Confirm top-up" }).click();
    await op.locator("tr", { hasText: email }).filter({ hasText: "₩9,700" }).waitFor();
    const ledger = await g.gw.deps.db.query<{ amount_micro: string }>(
      "select amount_micro::text from ledger_entries where user_id = $1 and kind = 'topup'",
      [userId],
    );
    expect(ledger.map((x) => x.amount_micro)).toEqual(["9700000000"]);
    // The form sent an Idempotency-Key: a resubmitted form would credit once.
    const keyed = await g.gw.deps.db.query<{ n: number }>(
      "select count(*)::int as n from topup_idempotency where user_id = $1",
      [userId],
    );
    expect(keyed[0]!.n).toBe(1);
    const stored = await op.evaluate(() => ({
      session: JSON.stringify({ ...sessionStorage }),
      local: JSON.stringify({ ...localStorage }),
    }));
    expect(stored.session).toContain(ADMIN_TOKEN);
    expect(stored.local).not.toContain(ADMIN_TOKEN);
    await op.close();
    await page.getByRole("button", { name: "Sign in", exact: true }).click();
    await page.getByRole("heading", { level: 1, name: "Overview" }).waitFor();
    expect(await page.getByTestId("balance").textContent()).toBe("₩9,700");
  });

  test("create a key: every field sent, the secret shown once", async () => {
    await nav("API keys");
    await page.getByRole("button", { name: "New API key" }).click();
    await page.getByLabel("Name").fill("e2e key");
    await page.getByLabel("Monthly budget (KRW)").fill("5000");
    await page.getByLabel("Monthly token limit").fill("100000");
    await page.getByLabel("Allowed models (comma-separated)").fill("gpt-4o-mini, claude-haiku-4-5");
    await page.getByRole("button", { name: "Create" }).click();
    const secret = (await page.getByTestId("secret").textContent())!;
    expect(secret).toMatch(/^sk-gw-/);
    const [row] = await g.gw.deps.db.query<any>(
      "select name, monthly_budget_krw, monthly_token_limit, allowed_models, key_hash from api_keys where user_id = $1",
      [userId],
    );
    expect(row).toMatchObject({
      name: "e2e key",
      monthly_token_limit: 100000,
      allowed_models: ["gpt-4o-mini", "claude-haiku-4-5"],
    });
    expect(Number(row.monthly_budget_krw)).toBe(5000);
    await page.getByRole("button", { name: "Close" }).click();
    await nav("Overview");
    await nav("API keys");
    await page.locator("td", { hasText: "e2e key" }).waitFor();
    expect(await page.content()).not.toContain(secret);
  });

  test("the playground streams an answer with its tokens, cost and latency", async () => {
    await nav("Playground");
    await page.getByRole("button", { name: "Create the playground key" }).click();
    await page.getByLabel("Model", { exact: true }).selectOption("gpt-4o-mini");
    await page.getByLabel("Message").fill("Say hello to the console");
    await page.getByRole("button", { name: "Send" }).click();
    const stats = page.getByTestId("answer-stats");
    await stats.waitFor();
    expect(await stats.textContent()).toMatch(/^Tokens \d+ → \d+ · ₩[\d.]+ · \d+ ms · openai · TTFT \d+ ms$/);
    const answer = await page.locator(".bubble").nth(1).textContent();
    expect(answer!.length).toBeGreaterThan("Model".length + 10);
  });

  test("activity finds that call with the cost the ledger charged; detail and CSV", async () => {
    await g.gw.settlements.quiesce();
    const [charge] = await g.gw.deps.db.query<{ request_id: string; amount_micro: string }>(
      "select request_id, amount_micro::text from ledger_entries where user_id = $1 and kind = 'charge'",
      [userId],
    );
    expect(charge).toBeDefined();
    const charged = -Number(charge!.amount_micro) / 1e6;
    await nav("Activity");
    const row = page.locator("tr", { hasText: "gpt-4o-mini" }).first();
    await row.waitFor();
    // The console's one rounding: below ₩1, up to four decimals (docs/console.md, "Money").
    expect(await row.locator("td[data-cost]").textContent()).toBe(
      charged < 1
        ? `₩${charged.toLocaleString("en-US", { maximumFractionDigits: 4 })}`
        : `₩${charged.toLocaleString("en-US", { maximumFractionDigits: 0 })}`,
    );
    // The playground streamed it through chat completions: the row says so, with its first token.
    const cells = await row.locator("td").allTextContents();
    expect(cells[2]).toContain("chat · Streamed");
    expect(cells[5]).toMatch(/^\d[\d,]* ms · \d[\d,]* ms$/);
    await page.getByRole("button", { name: `Details ${charge!.request_id}` }).click();
    await page.locator("dialog dd", { hasText: charge!.request_id }).waitFor();
    await page.locator("dialog").getByRole("button", { name: "Close" }).click();
    const download = page.waitForEvent("download");
    await page.getByRole("button", { name: "Export CSV" }).click();
    const csv = readFileSync((await (await download).path())!, "utf8").split("\r\n");
    expect(csv[0]).toBe(
      "created_at,request_id,key_id,model,provider,app,api,status,error_code,streamed,prompt_tokens,completion_tokens,cached_tokens,cost_krw,cost_usd,latency_ms,ttft_ms,cache_hit",
    );
    expect(csv[1]).toContain(charge!.request_id);
    expect(csv.filter(Boolean).length).toBe(2);
  });

  test("the overview draws its charts with data", async () => {
    await nav("Overview");
    await page.locator("figure.chart canvas").nth(4).waitFor();
    const inked = await inkedCharts(page);
    // By model, by key, by status, time to first token, latency of text calls.
    expect(inked.length).toBe(5);
    for (const n of inked) expect(n).toBeGreaterThan(20);
  });

  test("edit a key's budget, disable it, delete it after confirming", async () => {
    await nav("API keys");
    await page.getByRole("button", { name: "Edit e2e key" }).click();
    await page.getByLabel("Monthly budget (KRW)").fill("7000");
    await page.getByRole("button", { name: "Save" }).click();
    await page.locator("tr", { hasText: "e2e key" }).filter({ hasText: "₩7,000" }).waitFor();
    const id = (
      await g.gw.deps.db.query<{ id: string }>("select id from api_keys where user_id = $1 and name = 'e2e key'", [
        userId,
      ])
    )[0]!.id;
    const read = async () =>
      (
        await g.call("GET", "/v1/keys", {
          token: (
            await g.call("POST", "/v1/auth/login", { body: { email, password: "e2e-password-1" } })
          ).body.access_token,
        })
      ).body.items.find((k: any) => k.id === id);
    expect((await read()).monthly_budget_krw).toBe(7000);
    await page.getByRole("button", { name: "Disable e2e key" }).click();
    await page.getByRole("button", { name: "Enable e2e key" }).waitFor();
    expect((await read()).is_active).toBe(false);
    await page.getByRole("button", { name: "Delete e2e key" }).click();
    await page.locator("dialog").getByRole("button", { name: "Cancel" }).click();
    expect(await read()).toBeDefined();
    await page.getByRole("button", { name: "Delete e2e key" }).click();
    await page.locator("dialog").getByRole("button", { name: "Delete" }).click();
    await page.locator("td", { hasText: "e2e key" }).waitFor({ state: "detached" });
    expect(await read()).toBeUndefined();
  });

  test("no page reported a script error", () => {
    expect(errors).toEqual([]);
  });
});
