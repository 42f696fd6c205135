/** Signs a test user in through the console's own form (the session cookie in the browser profile, the token in the page's memory). */
import type { Page } from "playwright-core";
import type { TestGateway, TestUser } from "../harness";

export async function signIn(page: Page, g: TestGateway, u: TestUser): Promise<void> {
  await page.goto(g.url + "/#/sign-in");
  await page.locator('input[name="email"]').fill(u.email);
  await page.locator('input[name="password"]').fill(u.password);
  await page.locator('form button[type="submit"]').click();
  await page.locator("dl.cards").waitFor();
}
