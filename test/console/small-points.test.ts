/**
 * The smaller points of issue 31 (7) in Chromium: a routing policy deleted from the console,
 * the playground's system prompt and temperature in the request it sends, the operator's
 * organizations confirmed after each change with owners and members named by email, the
 * chosen operator tab visibly marked, and `/docs/` showing the reference (not a blank page).
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from "bun:test";
import { ADMIN_TOKEN, startTestGateway, type TestGateway, type TestUser } from "../harness";
import { fastUser } from "../support/http";
import { chromiumAvailable, openBrowser, watchErrors, type Browser } from "./browser";
import { signIn } from "./signin";
import type { Page } from "playwright-core";

setDefaultTimeout(60_000);
declare const getComputedStyle: any;

describe.skipIf(!chromiumAvailable())("the smaller console points in Chromium", () => {
  let g: TestGateway;
  let browser: Browser;
  let page: Page;
  let errors: string[];
  let u: TestUser;
  beforeAll(async () => {
    g = await startTestGateway();
    u = await fastUser(g, { creditKrw: 5000 });
    browser = await openBrowser({ locale: "en-US" });
    page = await browser.context.newPage();
    errors = watchErrors(page);
    await signIn(page, g, u);
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await g?.stop();
  });

  test("a routing policy is deleted after a confirmation", async () => {
    for (const slug of ["keep-me", "drop-me"]) {
      const r = await g.call("POST", "/v1/routing-policies", {
        token: u.jwt,
        body: { slug, display_name: slug, policy_type: "fallback", entries: [{ model: "gpt-4o-mini" }] },
      });
      expect(r.status).toBe(201);
    }
    await page.goto(g.url + "/#/policies");
    await page.locator("td", { hasText: "orch/drop-me" }).waitFor();
    await page.getByRole("button", { name: "Delete drop-me" }).click();
    const dialog = page.getByRole("dialog");
    await dialog.getByText("Delete the routing policy “orch/drop-me”?").waitFor();
    await dialog.getByRole("button", { name: "Delete" }).click();
    await page.locator("td", { hasText: "orch/drop-me" }).waitFor({ state: "detached" });
    await page.locator("td", { hasText: "orch/keep-me" }).waitFor();
    const left = (await g.call("GET", "/v1/routing-policies", { token: u.jwt })).body.items.map((p: any) => p.slug);
    expect(left).toEqual(["keep-me"]);
  });

  test("the playground sends the system prompt first and the temperature", async () => {
    await page.goto(g.url + "/#/playground");
    await page.getByRole("button", { name: "Create the playground key" }).click();
    await page.getByLabel("Model", { exact: true }).selectOption("gpt-4o-mini");
    await page.getByLabel("System prompt").fill("Answer in one word.");
    await page.getByLabel("Temperature").fill("0.3");
    await page.getByLabel("Message").fill("Hello there");
    const sent = page.waitForRequest((r) => r.url().endsWith("/v1/chat/completions"));
    await page.getByRole("button", { name: "Send" }).click();
    const body = (await sent).postDataJSON();
    expect(body.messages).toEqual([
      { role: "system", content: "Answer in one word." },
      { role: "user", content: "Hello there" },
    ]);
    expect(body.temperature).toBe(0.3);
    await page.getByTestId("answer-stats").waitFor();
    // Emptied, the temperature is left to the model: the field is not sent.
    await page.getByLabel("Temperature").fill("");
    await page.getByLabel("Message").fill("Again");
    const second = page.waitForRequest((r) => r.url().endsWith("/v1/chat/completions"));
    await page.getByRole("button", { name: "Send" }).click();
    expect("temperature" in (await second).postDataJSON()).toBe(false);
    await page.getByTestId("answer-stats").nth(1).waitFor();
  });

  test("operator: the chosen tab is marked, organizations confirm each change, people by email", async () => {
    const owner = await fastUser(g);
    const member = await fastUser(g);
    await page.goto(g.url + "/#/operator");
    await page.getByLabel("Admin token").fill(ADMIN_TOKEN);
    await page.getByRole("button", { name: "Use" }).click();
    const tab = (name: string) => page.getByRole("group").getByRole("button", { name, exact: true });
    await tab("Organizations").click();
    const look = (name: string) =>
      tab(name).evaluate((b: any) => {
        const s = getComputedStyle(b);
        return `${s.backgroundColor} ${s.color} ${s.fontWeight}`;
      });
    expect(await tab("Organizations").getAttribute("aria-pressed")).toBe("true");
    expect(await look("Organizations")).not.toBe(await look("Accounts"));
    expect(await look("Accounts")).toBe(await look("Settings"));

    await page.getByLabel("Name").fill("Beta");
    await page.getByLabel("Owner (email or user id)").fill(owner.email.toUpperCase());
    await page.getByRole("button", { name: "Create", exact: true }).click();
    await page.getByRole("status").filter({ hasText: "Organization “Beta” created." }).waitFor();
    const beta = page.getByRole("region", { name: "Beta" });
    await beta.locator("td", { hasText: owner.email }).waitFor();

    await page.getByLabel("Organization", { exact: true }).selectOption({ label: "Beta" });
    await page.getByLabel("Member (email or user id)").fill("nobody@test.example");
    await page.getByRole("button", { name: "Save" }).click();
    await page.getByRole("alert").filter({ hasText: "No account has the email nobody@test.example." }).waitFor();
    await page.getByLabel("Member (email or user id)").fill(member.email);
    await page.getByRole("button", { name: "Save" }).click();
    await page
      .getByRole("status")
      .filter({ hasText: `${member.email} saved in “Beta”.` })
      .waitFor();
    await beta.locator("td", { hasText: member.email }).waitFor();
    const orgs = (await g.admin("GET", "/v1/admin/orgs")).body.data;
    const ids = orgs.find((o: any) => o.name === "Beta").members.map((m: any) => m.user_id);
    expect(ids.sort()).toEqual([owner.id, member.id].sort());
    // The unknown email was refused in the page (its alert), not by a failed request.
    expect(errors).toEqual([]);
  });

  test("/docs/ with its trailing slash shows the API reference", async () => {
    const r = await fetch(g.url + "/docs/?x=1", { redirect: "manual" });
    expect([r.status, r.headers.get("location")]).toEqual([308, "../docs?x=1"]);
    const open = async (path: string) => {
      const docs = await browser.context.newPage();
      const missing: string[] = [];
      docs.on("response", (res) => void (res.status() >= 400 && missing.push(new URL(res.url()).pathname)));
      const docErrors = watchErrors(docs);
      await docs.goto(g.url + path);
      await docs.locator(".swagger-ui .info .title", { hasText: "Model Gateway API" }).waitFor();
      await docs.locator(".opblock-summary-path", { hasText: "/v1/auth/refresh" }).first().waitFor();
      await docs.waitForLoadState("networkidle");
      const seen = { path: new URL(docs.url()).pathname, missing, errors: docErrors };
      await docs.close();
      return seen;
    };
    // First `/docs` itself: the browser's favicon probe (a 404 with no page event, once per
    // host) is spent there. Then `/docs/` loads without a failed request or a console error.
    const plain = await open("/docs");
    expect(plain.missing).toEqual([]);
    expect(await open("/docs/")).toEqual({ path: "/docs", missing: [], errors: [] });
  });
});
