/**
 * Management keys in Chromium: one made with its secret shown once, the keys it provisions
 * listed under it, and a delete that takes them along when asked to.
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from "bun:test";
import { startTestGateway, type TestGateway, type TestUser } from "../harness";
import { fastUser } from "../support/http";
import { chromiumAvailable, openBrowser, watchErrors, type Browser } from "./browser";
import { signIn } from "./signin";

setDefaultTimeout(60_000);

describe.skipIf(!chromiumAvailable())("management keys in Chromium", () => {
  let g: TestGateway;
  let u: TestUser;
  let browser: Browser;
  beforeAll(async () => {
    g = await startTestGateway();
    u = await fastUser(g);
    browser = await openBrowser({ locale: "en-US" });
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await g?.stop();
  });

  test("create, see the provisioned keys, delete with them", async () => {
    const page = await browser.context.newPage();
    const errors = watchErrors(page);
    await signIn(page, g, u);
    await page.getByRole("link", { name: "Management keys" }).click();
    await page.getByLabel("Name").fill("ci provisioner");
    await page.getByRole("button", { name: "New management key" }).click();
    const secret = (await page.getByTestId("secret").textContent())!;
    expect(secret).toMatch(/^mk-gw-/);
    const ids: string[] = [];
    for (const name of ["child one", "child two"]) {
      const r = await g.call("POST", "/v1/provisioning/keys", {
        token: secret,
        body: { name, monthly_budget_krw: 1000 },
      });
      expect(r.status).toBe(201);
      ids.push(r.body.id);
    }
    await page.getByRole("button", { name: "Close" }).click();
    await page.getByRole("link", { name: "API keys" }).click();
    await page.getByRole("link", { name: "Management keys" }).click();
    const card = page.getByRole("region", { name: "ci provisioner" });
    await card.locator("li", { hasText: "child two" }).waitFor();
    expect(await card.locator("li").count()).toBe(2);
    expect(await page.content()).not.toContain(secret);
    await card.getByRole("button", { name: "Delete ci provisioner" }).click();
    await page.getByLabel("Also delete the keys it provisioned").check();
    await page.locator("dialog").getByRole("button", { name: "Delete" }).click();
    await card.waitFor({ state: "detached" });
    const keys = (await g.call("GET", "/v1/keys", { token: u.jwt })).body.items.map((k: any) => k.id);
    for (const id of ids) expect(keys).not.toContain(id);
    expect((await g.call("GET", "/v1/provisioning/keys", { token: secret })).status).toBe(401);
    expect(errors).toEqual([]);
  });
});
