/**
 * A real Chromium for the console's tests (playwright-core, the system's chromium). Outside CI
 * a machine without it skips these suites with a message; in CI (CI=true) its absence fails,
 * like PostgreSQL and Redis in the harness.
 */
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium, type BrowserContext, type Page } from "playwright-core";

export const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

export function chromiumAvailable(): boolean {
  if (existsSync(CHROMIUM)) return true;
  if (process.env.CI) throw new Error(`CI needs Chromium at ${CHROMIUM} (.ci/run installs it)`);
  console.warn(
    `console browser tests skipped: no Chromium at ${CHROMIUM} (apt-get install chromium, or set CHROMIUM_PATH)`,
  );
  return false;
}

export interface Browser {
  context: BrowserContext;
  close(): Promise<void>;
}

/** A fresh profile each time; no network beyond loopback, so the flags keep Chromium quiet. */
export async function openBrowser(
  opts: { locale?: string; colorScheme?: "light" | "dark"; viewport?: { width: number; height: number } } = {},
): Promise<Browser> {
  const profile = mkdtempSync(join(tmpdir(), "gw-chromium-"));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    locale: opts.locale ?? "ko-KR",
    colorScheme: opts.colorScheme ?? "light",
    viewport: opts.viewport ?? { width: 1280, height: 900 },
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
  context.setDefaultTimeout(10_000);
  return {
    context,
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/** Every script error, console error and CSP violation the page reports, collected as text (into `errors` when given). */
export function watchErrors(page: Page, errors: string[] = []): string[] {
  page.on("pageerror", (e) => errors.push(`pageerror: ${e.message}`));
  page.on("console", (m) => {
    if (m.type() === "error") errors.push(`console: ${m.text()}`);
  });
  return errors;
}
