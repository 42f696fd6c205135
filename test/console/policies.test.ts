/**
 * Routing policies in Chromium: the form is checked by the server while it is typed, each
 * error shown at its field (an unknown model at the entries, a bad config key at the config),
 * then the policy is created and edited, as the API then reads it, and a call through it shows
 * among its recent decisions.
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from "bun:test";
import { startTestGateway, type TestGateway, type TestUser } from "../harness";
import { fastUser } from "../support/http";
import { chromiumAvailable, openBrowser, watchErrors, type Browser } from "./browser";
import { signIn } from "./signin";

setDefaultTimeout(60_000);

describe.skipIf(!chromiumAvailable())("routing policies in Chromium", () => {
  let g: TestGateway;
  let u: TestUser;
  let browser: Browser;
  beforeAll(async () => {
    g = await startTestGateway();
    u = await fastUser(g, { creditKrw: 1_000 });
    browser = await openBrowser({ locale: "en-US" });
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await g?.stop();
  });

  test("errors at their fields as typed; create, then edit", async () => {
    const page = await browser.context.newPage();
    const errors = watchErrors(page);
    await signIn(page, g, u);
    await page.getByRole("link", { name: "Routing policies" }).click();
    await page.getByRole("button", { name: "New policy" }).click();
    await page.getByLabel("Slug").fill("support-bot");
    await page.getByLabel("Display name").fill("Support bot");
    await page.getByLabel("Model 1", { exact: true }).fill("no-such-model");
    const entriesError = page.locator('[data-field="entries"]');
    await entriesError.waitFor();
    expect(await entriesError.textContent()).toStartWith("entries[0]:");
    await page.getByLabel("Model 1", { exact: true }).fill("gpt-4o-mini");
    await entriesError.waitFor({ state: "detached" });
    await page.getByLabel("Config (JSON)").fill('{"nonsense": 1}');
    const configError = page.locator(".field", { hasText: "Config (JSON)" }).getByRole("alert");
    await configError.waitFor();
    await page.getByLabel("Config (JSON)").fill("{ not json");
    await configError.filter({ hasText: "Not a JSON object." }).waitFor();
    await page.getByLabel("Config (JSON)").fill("{}");
    await page.getByRole("button", { name: "Add entry" }).click();
    await page.getByLabel("Model 2", { exact: true }).fill("claude-haiku-4-5");
    await page.getByTestId("policy-check").filter({ hasText: "The server accepts it" }).waitFor();
    await page.getByRole("button", { name: "Create", exact: true }).click();
    await page.locator("td", { hasText: "orch/support-bot" }).waitFor();
    let stored = (await g.call("GET", "/v1/routing-policies", { token: u.jwt })).body.items[0];
    expect(stored).toMatchObject({
      slug: "support-bot",
      display_name: "Support bot",
      policy_type: "fallback",
      is_active: true,
    });
    expect(stored.entries.map((e: any) => e.model)).toEqual(["gpt-4o-mini", "claude-haiku-4-5"]);

    await page.getByRole("button", { name: "Edit support-bot" }).click();
    await page.getByLabel("Type").selectOption("weighted");
    await page.getByLabel("Weight 1").fill("3");
    await page.getByLabel("Weight 2").fill("1");
    await page.getByTestId("policy-check").filter({ hasText: "The server accepts it" }).waitFor();
    await page.getByRole("button", { name: "Save" }).click();
    await page.locator("td", { hasText: "weighted" }).waitFor();
    stored = (await g.call("GET", "/v1/routing-policies", { token: u.jwt })).body.items[0];
    expect(stored.entries.map((e: any) => e.weight)).toEqual([3, 1]);
    // A call through the policy shows among its recent decisions, with its header.
    const key = (await g.newKey(u)).key;
    const call = await g.call("POST", "/v1/chat/completions", {
      token: key,
      body: { model: "orch/support-bot", messages: [{ role: "user", content: "hi" }], max_tokens: 8 },
    });
    expect(call.status).toBe(200);
    await g.gw.settlements.quiesce();
    await page.getByRole("button", { name: "Recent decisions support-bot" }).click();
    await page.locator("code", { hasText: call.headers.get("x-policy-decision")! }).waitFor();
    // Only the validation answers (400/422) the page asked for are logged by the browser.
    expect(errors.filter((e) => !/status of (400|422)/.test(e))).toEqual([]);
  });
});
