/**
 * The console's model page in a real Chromium, on the lifecycle test catalog (day pinned to
 * 2026-12-01): video rows show their KRW prices (per second by resolution; per 1,000 output
 * tokens for Family G Omni) instead of "–", and models show their deprecation and retirement
 * days with their successor, in Korean and in English.
 */
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { lifecycleGateway } from "../catalog/lifecycle-gateway";
import { chromiumAvailable, openBrowser, watchErrors } from "./browser";

setDefaultTimeout(60_000);

describe.skipIf(!chromiumAvailable())("console model page: video prices and lifecycle", () => {
  const life = lifecycleGateway();

  const rowOf = (page: any, id: string) =>
    page.locator("tr", { has: page.locator("code", { hasText: new RegExp(`^${id}$`) }) }).first();

  test("video prices in KRW per second and per 1K output tokens; dates and successors", async () => {
    const browser = await openBrowser();
    try {
      const page = await browser.context.newPage();
      const errors = watchErrors(page);
      await page.goto(life.g().url + "/#/models");
      await page.getByRole("heading", { level: 1, name: "모델 카탈로그" }).waitFor();
      await page.locator("code", { hasText: /^veo-3$/ }).waitFor();

      const veo = rowOf(page, "veo-3");
      const veoPrices = veo.getByRole("list", { name: "동영상 가격" });
      expect(await veoPrices.locator("li").allTextContents()).toEqual([
        "480p ₩420/초",
        "720p ₩560/초",
        "1080p ₩560/초",
        "1440p ₩840/초",
        "4k ₩1,120/초",
      ]);
      expect(await rowOf(page, "kling-v3").textContent()).toContain("1080p ₩150/초");
      expect(await rowOf(page, "veo-3-omni").textContent()).toContain("출력 1천 토큰당 ₩60");
      expect(await veo.locator("td.video-price").textContent()).not.toContain("–");

      // Deprecated (warned), retired (refused), and announced for later.
      expect(await rowOf(page, "gemini-2.5-flash").locator(".lifecycle").textContent()).toBe(
        "2026-11-01부터 사용 중단 예정2027-03-01 지원 종료후속 모델: gemini-2.5-pro",
      );
      expect(await rowOf(page, "gpt-4o").locator(".lifecycle").textContent()).toBe(
        "2026-11-30 지원 종료됨후속 모델: gpt-4o-mini",
      );
      expect(await rowOf(page, "gpt-4o").locator(".lifecycle.retired").count()).toBe(1);
      expect(await rowOf(page, "gpt-4o-mini").locator(".lifecycle.active").count()).toBe(1);
      expect(await rowOf(page, "deepseek-v3").locator(".lifecycle").count()).toBe(0);

      await page.getByLabel("언어").selectOption("en");
      await page.getByRole("heading", { level: 1, name: "Model catalog" }).waitFor();
      expect(await rowOf(page, "veo-3-omni").textContent()).toContain("₩60 per 1K output tokens");
      expect(await rowOf(page, "veo-3").getByRole("list", { name: "Video price" }).textContent()).toContain(
        "720p ₩560/s",
      );
      expect(await rowOf(page, "claude-sonnet-4-5").locator(".lifecycle").textContent()).toBe(
        "Retired on 2026-11-30Successor: claude-haiku-4-5",
      );
      expect(errors).toEqual([]);
    } finally {
      await browser.close();
    }
  });
});
