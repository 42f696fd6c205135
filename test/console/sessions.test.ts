/**
 * Console sessions in Chromium (docs/console.md, "Sessions"): signed in, a reload and a new tab
 * stay signed in; sign-out shows the sign-in form after a reload and the old refresh cookie is
 * refused. A stolen access token (copied out of the page's traffic) expires within its
 * configured seconds and cannot be refreshed without the cookie, while the tab itself carries on.
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from "bun:test";
import { startTestGateway, type TestGateway, type TestUser } from "../harness";
import { fastUser } from "../support/http";
import { chromiumAvailable, openBrowser, watchErrors, type Browser } from "./browser";
import { signIn } from "./signin";

setDefaultTimeout(60_000);
declare const document: any;

describe.skipIf(!chromiumAvailable())("console sessions in Chromium", () => {
  let g: TestGateway;
  let browser: Browser;
  let u: TestUser;
  beforeAll(async () => {
    // Access tokens live 3 seconds here, so the expiry case runs in the suite's time.
    g = await startTestGateway({ env: { SESSION_ACCESS_TTL_SECONDS: "3" } });
    u = await fastUser(g);
    await g.newKey(u, { name: "kept-after-expiry" });
    browser = await openBrowser({ locale: "en-US" });
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await g?.stop();
  });

  const refreshCookie = async () =>
    (await browser.context.cookies(g.url + "/v1/auth/refresh")).find((c) => c.name === "gw_refresh");
  const refreshWith = (cookie: string | null, token?: string) =>
    fetch(g.url + "/v1/auth/refresh", {
      method: "POST",
      headers: {
        origin: g.url,
        ...(cookie && { cookie: `gw_refresh=${cookie}` }),
        ...(token && { authorization: `Bearer ${token}` }),
      },
    });

  test("reload and a new tab stay signed in; sign-out ends it and the old cookie is refused", async () => {
    const page = await browser.context.newPage();
    const errors = watchErrors(page);
    await signIn(page, g, u);
    const cookie = await refreshCookie();
    expect(cookie).toMatchObject({ httpOnly: true, sameSite: "Strict", path: "/v1/auth", secure: false });
    // The page's script cannot read it.
    expect(await page.evaluate(() => document.cookie)).not.toContain("gw_refresh");

    await page.reload();
    await page.locator("dl.cards").waitFor();
    await page.getByRole("button", { name: "Sign out" }).waitFor();
    // Each refresh rotated the cookie.
    expect((await refreshCookie())!.value).not.toBe(cookie!.value);

    const tab = await browser.context.newPage();
    watchErrors(tab, errors);
    await tab.goto(g.url + "/#/keys");
    await tab.getByRole("heading", { name: "API keys" }).waitFor();
    await tab.getByRole("button", { name: "Sign out" }).waitFor();
    await tab.close();

    const beforeSignOut = (await refreshCookie())!.value;
    // The page forgets its token at once; the cookie goes with the logout's answer.
    const loggedOut = page.waitForResponse((r) => r.url().endsWith("/v1/auth/logout"));
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.getByRole("link", { name: "Sign in" }).waitFor();
    expect((await loggedOut).status()).toBe(204);
    expect(await refreshCookie()).toBeUndefined();
    await page.goto(g.url + "/#/overview");
    await page.reload();
    await page.locator('input[name="password"]').waitFor();
    expect(await page.getByRole("button", { name: "Sign out" }).count()).toBe(0);
    // The cookie the browser held before signing out is dead on the server, not just deleted here.
    const replay = await refreshWith(beforeSignOut);
    expect(replay.status).toBe(401);
    expect(errors).toEqual([]);
    await page.close();
  });

  test("a stolen access token expires in seconds and cannot be refreshed without the cookie", async () => {
    const page = await browser.context.newPage();
    const errors = watchErrors(page);
    const login = page.waitForResponse((r) => r.url().endsWith("/v1/auth/login"));
    await signIn(page, g, u);
    const { access_token: stolen, expires_in } = await (await login).json();
    expect(expires_in).toBe(3);
    expect((await g.call("GET", "/v1/me", { token: stolen })).status).toBe(200);
    // Used from elsewhere until it stops working: no longer than its lifetime plus a margin.
    const deadline = Date.now() + 15_000;
    let status = 200;
    while (status === 200 && Date.now() < deadline) {
      await Bun.sleep(500);
      status = (await g.call("GET", "/v1/me", { token: stolen })).status;
    }
    expect(status).toBe(401);
    // The token is no refresh credential: without the cookie nothing comes back.
    const r = await refreshWith(null, stolen);
    expect(r.status).toBe(401);
    expect(r.headers.get("set-cookie")).toBeNull();
    // The tab holding the cookie carries on: its next call gets a fresh token.
    await page.goto(g.url + "/#/keys");
    await page.getByRole("heading", { name: "API keys" }).waitFor();
    await page.locator("td", { hasText: "kept-after-expiry" }).waitFor();
    expect(errors).toEqual([]);
    await page.close();
  });
});
