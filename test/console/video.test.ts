/**
 * Video jobs in Chromium: the account's jobs with status and cost, a processing one cancelled
 * (hold released), a finished one played from its stored result read by ranges.
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from "bun:test";
import { startTestGateway, type TestGateway, type TestUser } from "../harness";
import { fastUser } from "../support/http";
import { FAST_POLL, submit, waitJob } from "../video/helpers";
import { chromiumAvailable, openBrowser, watchErrors, type Browser } from "./browser";
import { signIn } from "./signin";

setDefaultTimeout(60_000);
declare const document: any;

describe.skipIf(!chromiumAvailable())("video jobs in Chromium", () => {
  let g: TestGateway;
  let u: TestUser;
  let browser: Browser;
  let done: string;
  let slow: string;
  beforeAll(async () => {
    g = await startTestGateway({ env: FAST_POLL });
    u = await fastUser(g, { creditKrw: 100_000 });
    const key = (await g.newKey(u)).key;
    done = (await submit(g, key, { model: "veo-3", duration_seconds: 3, prompt: "a paper boat [sim:video_ms=50]" }))
      .body.job_id;
    expect((await waitJob(g, key, done)).status).toBe("succeeded");
    slow = (await submit(g, key, { model: "veo-3", duration_seconds: 3, prompt: "a long river [sim:video_ms=30000]" }))
      .body.job_id;
    browser = await openBrowser({ locale: "en-US" });
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await g?.stop();
  });

  test("list, cancel, play", async () => {
    const page = await browser.context.newPage();
    const errors = watchErrors(page);
    // Ranges of 1 MB: the file is read in several requests when it is larger.
    const ranges: string[] = [];
    let received = 0;
    page.on("response", (r) => {
      if (!r.url().endsWith(`/v1/video/jobs/${done}/content`)) return;
      ranges.push(r.request().headers().range ?? "");
      received += Number(r.headers()["content-length"]);
    });
    await signIn(page, g, u);
    await page.getByRole("link", { name: "Video jobs" }).click();
    const doneRow = page.locator(`tr[data-job-id="${done}"]`);
    await doneRow.waitFor();
    expect(await doneRow.textContent()).toContain("succeeded");
    expect(await doneRow.textContent()).toMatch(/₩[\d,]+/);
    await page.getByRole("button", { name: `Cancel job ${slow}` }).click();
    await page.locator(`tr[data-job-id="${slow}"]`, { hasText: "canceled" }).waitFor();
    const [hold] = await g.gw.deps.db.query<{ status: string }>("select status from holds where id = $1", [slow]);
    expect(hold!.status).toBe("released");
    await page.getByRole("button", { name: `Play ${done}` }).click();
    await page.getByTestId("player").waitFor();
    const [row] = await g.gw.deps.db.query<{ content_size: number }>(
      "select content_size from video_jobs where id = $1",
      [done],
    );
    expect(received).toBe(Number(row!.content_size));
    expect(await page.evaluate(() => document.querySelector("video").src)).toStartWith("blob:");
    expect(ranges[0]).toBe("bytes=0-1048575");
    expect(errors).toEqual([]);
  });
});
