/**
 * Issue 31 C: every money figure of the console comes from the account's ledger and usage
 * events, deleted keys included, with one rounding. Calls are made with two keys, one key is
 * deleted, and each page's figures (overview, keys, activity, the playground's cost line) are
 * compared in Chromium with the same figures read in SQL.
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from "bun:test";
import { startTestGateway, type TestGateway, type TestUser } from "../harness";
import { chromiumAvailable, openBrowser, watchErrors, type Browser } from "./browser";
import { signIn } from "./signin";
import type { Page } from "playwright-core";

setDefaultTimeout(90_000);

/** The console's rounding (docs/console.md, "Money"), in English: the oracle the pages must match. */
export function krwText(n: number): string {
  const a = Math.abs(n);
  if (a > 0 && a < 0.0001) return `${n < 0 ? "-" : ""}<₩0.0001`;
  return `${n < 0 ? "-" : ""}₩${a.toLocaleString("en-US", { maximumFractionDigits: a < 1 ? 4 : 0 })}`;
}

async function call(g: TestGateway, key: string, content: string, model = "gpt-4o-mini") {
  const r = await g.call("POST", "/v1/chat/completions", {
    token: key,
    body: { model, messages: [{ role: "user", content }] },
  });
  if (r.status !== 200) throw new Error(`chat ${r.status} ${JSON.stringify(r.body)}`);
}

describe.skipIf(!chromiumAvailable())("figures from the ledger (issue 31 C)", () => {
  let g: TestGateway;
  let browser: Browser;
  let page: Page;
  let errors: string[];
  let u: TestUser;
  let kept: any;
  let gone: any;
  const sql = <T = any>(q: string, p: unknown[] = []) => g.gw.deps.db.query<T>(q, p);
  beforeAll(async () => {
    g = await startTestGateway();
    u = await g.newUser({ creditKrw: 5000 });
    kept = await g.newKey(u, { name: "kept key" });
    gone = await g.newKey(u, { name: "doomed key" });
    for (let i = 0; i < 2; i++) await call(g, kept.key, `kept ${i} ${"long words ".repeat(40 * (i + 1))}`);
    for (let i = 0; i < 5; i++) await call(g, gone.key, `doomed ${i} ${"many words ".repeat(300)}`, "gpt-4o");
    await g.gw.settlements.quiesce();
    expect((await g.call("DELETE", `/v1/keys/${gone.id}`, { token: u.jwt })).status).toBe(200);
    browser = await openBrowser({ locale: "en-US", viewport: { width: 1440, height: 900 } });
    page = await browser.context.newPage();
    errors = watchErrors(page);
    await signIn(page, g, u);
  }, 90_000);
  afterAll(async () => {
    await browser?.close();
    await g?.stop();
  });
  const nav = (name: string) => page.getByRole("navigation").getByRole("link", { name, exact: true }).click();
  /** This month's spend and calls per key, in SQL (micro-won summed, converted once). */
  const perKey = async () =>
    sql<{ key_id: string; n: number; micro: string }>(
      `select key_id, count(*)::int as n, sum(cost_micro)::text as micro from usage_events
        where user_id = $1 and created_at >= date_trunc('month', now() at time zone 'UTC') at time zone 'UTC'
        group by key_id`,
      [u.id],
    );

  test("the ledger's charges and the usage events agree, the deleted key's included", async () => {
    const [{ charged }] = await sql<{ charged: string }>(
      "select (-sum(amount_micro))::text as charged from ledger_entries where user_id = $1 and kind = 'charge'",
      [u.id],
    );
    const rows = await perKey();
    expect(rows.reduce((s, r) => s + BigInt(r.micro), 0n)).toBe(BigInt(charged));
    expect(rows.find((r) => r.key_id === gone.id)!.n).toBe(5);
  });

  test("the overview's month spend and requests count every key, deleted ones too", async () => {
    const rows = await perKey();
    const micro = rows.reduce((s, r) => s + BigInt(r.micro), 0n);
    // Above ₩1 (whole won) while the kept key's calls are below (four decimals): both roundings are seen.
    expect(micro).toBeGreaterThan(1_000_000n);
    const [me] = await sql<{ balance_micro: string }>("select balance_micro::text from users where id = $1", [u.id]);
    await page.getByRole("heading", { level: 1, name: "Overview" }).waitFor();
    expect(await page.getByTestId("month-spend").textContent()).toBe(krwText(Number(micro) / 1e6));
    expect(await page.getByTestId("month-requests").textContent()).toBe("7");
    expect(await page.getByTestId("balance").textContent()).toBe(krwText(Number(me!.balance_micro) / 1e6));
    // The per-key table names the deleted key, with its own spend.
    const doomed = page.getByTestId("by-key").locator("tr", { hasText: "doomed key (deleted)" });
    const micro2 = BigInt(rows.find((r) => r.key_id === gone.id)!.micro);
    expect(await doomed.locator("td[data-cost]").textContent()).toBe(krwText(Number(micro2) / 1e6));
    expect(await doomed.locator("td").first().textContent()).toBe("5");
  });

  test("the keys page shows each live key's month from the same events", async () => {
    await nav("API keys");
    const row = page.locator("tr", { hasText: "kept key" });
    await row.waitFor();
    const k = (await perKey()).find((r) => r.key_id === kept.id)!;
    expect(await row.getByTestId("key-usage").textContent()).toBe(`${krwText(Number(k.micro) / 1e6)} · 2 Calls`);
  });

  test("activity lists every call at its ledger charge, with the same rounding", async () => {
    await nav("Activity");
    await page.locator("table.activity tbody tr").nth(6).waitFor();
    const charges = await sql<{ request_id: string; micro: string }>(
      `select e.request_id, (-l.amount_micro)::text as micro from ledger_entries l
         join usage_events e on e.request_id = l.request_id where l.user_id = $1 and l.kind = 'charge'`,
      [u.id],
    );
    expect(charges.length).toBe(7);
    for (const c of charges) {
      const row = page.locator("tr", { has: page.getByRole("button", { name: `Details ${c.request_id}` }) });
      expect(await row.locator("td[data-cost]").textContent()).toBe(krwText(Number(c.micro) / 1e6));
    }
  });

  test("the playground's cost line is the ledger's charge of that call", async () => {
    await nav("Playground");
    await page.getByRole("button", { name: "Create the playground key" }).click();
    await page.getByLabel("Model", { exact: true }).selectOption("gpt-4o-mini");
    await page.getByLabel("Message").fill("What does this call cost?");
    await page.getByRole("button", { name: "Send" }).click();
    const stats = page.getByTestId("answer-stats");
    await stats.waitFor();
    const [last] = await sql<{ micro: string }>(
      `select (-l.amount_micro)::text as micro from ledger_entries l
         join usage_events e on e.request_id = l.request_id join api_keys k on k.id = e.key_id
        where l.user_id = $1 and l.kind = 'charge' and k.name = 'console-playground'`,
      [u.id],
    );
    const text = (await stats.textContent())!;
    expect(text.split(" · ")[1]).toBe(krwText(Number(last!.micro) / 1e6));
  });

  test("no script error", () => {
    expect(errors).toEqual([]);
  });
});
