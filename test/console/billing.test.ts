/**
 * Buying credits in Chromium, in demo mode (the simulator's payment provider): /billing shows
 * the 3 % fee and the credit before paying, the provider's checkout takes the card, the
 * customer comes back to the result page, the history lists the top-up with its fee and the
 * balance after it, and exports CSV. The books are read in SQL. No script error.
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from "bun:test";
import { readFileSync } from "node:fs";
import { startTestGateway, type TestGateway } from "../harness";
import { fastUser } from "../support/http";
import { chromiumAvailable, openBrowser, watchErrors, type Browser } from "./browser";
import type { Page } from "playwright-core";

setDefaultTimeout(60_000);

describe.skipIf(!chromiumAvailable())("buying credits on /billing in Chromium (demo mode)", () => {
  let g: TestGateway;
  let browser: Browser;
  let page: Page;
  let errors: string[];
  beforeAll(async () => {
    g = await startTestGateway({ env: { DEMO_MODE: "true", VIDEO_POLL_WORKERS: "0" } });
    browser = await openBrowser({ locale: "en-US" });
    page = await browser.context.newPage();
    errors = watchErrors(page);
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await g?.stop();
  });

  const signInHere = async (email: string, password: string) => {
    await page.locator('input[name="email"]').fill(email);
    await page.locator('input[name="password"]').fill(password);
    await page.locator('form button[type="submit"]').click();
  };

  test("the fee before paying, the simulator's checkout, the result, the history and its CSV", async () => {
    const u = await fastUser(g);
    await page.goto(g.url + "/#/sign-in");
    await signInHere(u.email, u.password);
    await page.locator("dl.cards").waitFor();
    await page.getByRole("navigation").getByRole("link", { name: "Billing", exact: true }).click();
    await page.getByRole("heading", { name: "Buy credits" }).waitFor();
    expect(await page.getByTestId("billing-balance").textContent()).toBe("₩0");
    const fee = page.getByTestId("billing-fee");
    expect(await fee.textContent()).toBe("Platform fee 3%: ₩300. Credited to your balance: ₩9,700.");
    await page.getByLabel("Amount paid (KRW)").fill("20000");
    expect(await fee.textContent()).toBe("Platform fee 3%: ₩600. Credited to your balance: ₩19,400.");
    await page.getByLabel("Amount paid (KRW)").fill("999");
    expect(await page.getByRole("button", { name: /^Pay / }).isDisabled()).toBe(true);
    await page.getByRole("button", { name: "₩20,000" }).click();

    // The provider's checkout (the simulator's page, another origin), paid with a test card.
    await page.getByRole("button", { name: "Pay ₩20,000" }).click();
    await page.waitForURL(/\/sim\/payments\/checkout\//);
    expect(await page.locator("#amount").textContent()).toBe("₩20,000");
    await page.getByRole("button", { name: "Pay ₩20,000" }).click();

    // Back at the console's result page; the dashboard token lived in the old page's memory.
    await page.waitForURL(/#\/billing\/result\?order_id=ord_/);
    if (await page.locator('input[name="email"]').isVisible()) await signInHere(u.email, u.password);
    await page.getByText("Payment received: ₩19,400 credited to your balance.").waitFor();
    const [books] = await g.gw.deps.db.query<{ balance: string; entries: string[] }>(
      `select (select balance_micro::text from users where id = $1) as balance,
              (select array_agg(kind || ' ' || amount_micro::text order by id) from ledger_entries where user_id = $1) as entries`,
      [u.id],
    );
    expect(books).toEqual({ balance: "19400000000", entries: ["topup 19400000000"] });

    await page.getByRole("link", { name: "Back to billing" }).click();
    const row = page.locator("tbody tr", { hasText: "Top-up" });
    await row.waitFor();
    expect(await row.locator("td").allTextContents()).toEqual([
      expect.any(String),
      "Top-up",
      "₩20,000",
      "₩600",
      "₩19,400",
      "₩19,400",
      expect.stringMatching(/^ord_/),
    ]);
    expect(await page.getByTestId("billing-balance").textContent()).toBe("₩19,400");
    const [download] = await Promise.all([
      page.waitForEvent("download"),
      page.getByRole("button", { name: "Export CSV" }).click(),
    ]);
    const csv = readFileSync((await download.path())!, "utf8")
      .trim()
      .split("\r\n");
    expect(csv[0]).toBe("at,type,order_id,provider,paid_krw,fee_krw,amount_krw,balance_krw,failure_code");
    expect(csv[1]).toMatch(/,topup,ord_[0-9a-f]{32},sim,20000,600,19400,19400,$/);
    expect(errors).toEqual([]);
  });

  test("auto top-up: a card saved at the provider's page, then on with its fee shown", async () => {
    const u = await fastUser(g, { creditKrw: 3_000 });
    await page.goto(g.url + "/#/sign-in");
    await signInHere(u.email, u.password);
    await page.locator("dl.cards").waitFor();
    await page.getByRole("navigation").getByRole("link", { name: "Billing", exact: true }).click();
    await page.getByRole("heading", { name: "Auto top-up" }).waitFor();
    expect(await page.getByRole("checkbox", { name: "Top up automatically" }).isDisabled()).toBe(true);
    await page.getByRole("button", { name: "Save a card for auto top-up" }).click();
    await page.waitForURL(/\/sim\/payments\/card\//);
    await page.getByRole("button", { name: "Save card" }).click();
    await page.waitForURL(/#\/billing\?card=saved/);
    if (await page.locator('input[name="email"]').isVisible()) await signInHere(u.email, u.password);
    await page.getByText("The card is saved.").waitFor();
    expect(await page.getByTestId("saved-card").textContent()).toBe("4242********4242");
    await page.getByRole("checkbox", { name: "Top up automatically" }).check();
    await page.getByLabel("When free credit falls under (KRW)").fill("5000");
    await page.getByLabel("Charge (KRW)").fill("20000");
    expect(await page.getByTestId("auto-fee").textContent()).toBe(
      "Charges ₩20,000 to the saved card when your free credit falls under ₩5,000: fee ₩600, credited ₩19,400.",
    );
    await page.getByRole("button", { name: "Save", exact: true }).click();
    await page.getByText("Saved.", { exact: true }).waitFor();
    const [row] = await g.gw.deps.db.query<{ enabled: boolean; threshold_krw: string; amount_krw: string }>(
      "select enabled, threshold_krw::text, amount_krw::text from auto_topups where user_id = $1",
      [u.id],
    );
    expect(row).toEqual({ enabled: true, threshold_krw: "5000", amount_krw: "20000" });
    expect(errors).toEqual([]);
  });
});
