/**
 * The operator pages in Chromium: a wrong admin token is refused, account flags change,
 * the routing gates switch, an organization is made and a member given a role and a budget,
 * each checked through the API. The token stays in the tab's sessionStorage.
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from "bun:test";
import { ADMIN_TOKEN, startTestGateway, type TestGateway, type TestUser } from "../harness";
import { fastUser } from "../support/http";
import { chromiumAvailable, openBrowser, watchErrors, type Browser } from "./browser";
import type { Page } from "playwright-core";

setDefaultTimeout(60_000);

describe.skipIf(!chromiumAvailable())("the operator console in Chromium", () => {
  let g: TestGateway;
  let browser: Browser;
  let page: Page;
  let errors: string[];
  let owner: TestUser;
  let member: TestUser;
  beforeAll(async () => {
    g = await startTestGateway();
    owner = await fastUser(g);
    member = await fastUser(g);
    browser = await openBrowser({ locale: "en-US" });
    page = await browser.context.newPage();
    errors = watchErrors(page);
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await g?.stop();
  });

  test("a wrong token is refused; the right one opens the accounts", async () => {
    await page.goto(g.url + "/#/operator");
    await page.getByLabel("Admin token").fill("not-the-token");
    await page.getByRole("button", { name: "Use" }).click();
    await page.getByRole("alert").filter({ hasText: "The admin token is not valid." }).waitFor();
    // The refused call's 401 is the only console line allowed here.
    expect(errors.every((e) => e.includes("401"))).toBe(true);
    errors.length = 0;
    await page.getByLabel("Admin token").fill(ADMIN_TOKEN);
    await page.getByRole("button", { name: "Use" }).click();
    await page.locator("td", { hasText: owner.email }).waitFor();
  });

  test("account flags change through the API", async () => {
    const box = page.getByRole("checkbox", { name: `regulated ${member.email}` });
    expect(await box.isChecked()).toBe(false);
    const reloaded = page.waitForResponse((r) => r.url().endsWith("/v1/admin/users?limit=50"));
    await box.click();
    // The page answers the click with a PATCH and then reloads the list. The reload's response
    // arrives before the table is drawn from it, so wait for the drawn state itself.
    await reloaded;
    await page.getByRole("checkbox", { name: `regulated ${member.email}`, checked: true }).waitFor();
    const r = await g.admin("GET", `/v1/admin/users?q=${encodeURIComponent(member.email)}`);
    expect(r.body.data[0].regulated).toBe(true);
  });

  test("the routing gates switch", async () => {
    await page.getByRole("button", { name: "Settings" }).click();
    const box = page.getByRole("checkbox", { name: /Routing policies enabled/ });
    const before = (await g.admin("GET", "/v1/admin/settings")).body["routing.policies_enabled"];
    expect(await box.isChecked()).toBe(before);
    const reloaded = page.waitForResponse(
      (r) => r.url().endsWith("/v1/admin/settings") && r.request().method() === "GET",
    );
    await box.click();
    await reloaded;
    expect((await g.admin("GET", "/v1/admin/settings")).body["routing.policies_enabled"]).toBe(!before);
  });

  test("an organization with its owner, then a member with a role and a budget", async () => {
    await page.getByRole("button", { name: "Organizations" }).click();
    await page.getByLabel("Name").fill("Acme");
    await page.getByLabel("Owner (email or user id)").fill(owner.id);
    await page.getByRole("button", { name: "Create", exact: true }).click();
    const acme = page.getByRole("region", { name: "Acme" });
    await acme.locator("td", { hasText: owner.email }).waitFor();
    await page.getByLabel("Organization", { exact: true }).selectOption({ label: "Acme" });
    await page.getByLabel("Member (email or user id)").fill(member.id);
    await page.getByLabel("Role").selectOption("admin");
    await page.getByLabel("Monthly budget (KRW, empty = unlimited)").fill("20000");
    await page.getByRole("button", { name: "Save" }).click();
    await acme.locator("tr", { hasText: member.email }).filter({ hasText: "₩20,000" }).waitFor();
    const orgs = (await g.admin("GET", "/v1/admin/orgs")).body.data;
    expect(orgs[0].members.find((m: any) => m.user_id === member.id)).toMatchObject({
      role: "admin",
      monthly_budget_krw: 20000,
    });
    expect(errors).toEqual([]);
  });
});
