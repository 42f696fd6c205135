/**
 * The demo exception of the catalog contract, in demo mode itself: a retired id of the contract
 * table (claude-sonnet-4-5 on the test catalog) keeps answering with the deprecation headers
 * while the simulator serves its provider; with the simulator off it is refused (400
 * `model_retired`, not 503), and nothing is held.
 */
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { booksOf, lifecycleGateway } from "./lifecycle-gateway";

setDefaultTimeout(30_000);

const body = { model: "claude-sonnet-4-5", max_tokens: 20, messages: [{ role: "user", content: "hi" }] };

async function call(url: string, key: string) {
  return fetch(url + "/v1/messages", {
    method: "POST",
    headers: { "x-api-key": key, "anthropic-version": "2023-06-01", "content-type": "application/json" },
    body: JSON.stringify(body),
  });
}

describe("demo mode: the simulator keeps answering a retired contract id", () => {
  const life = lifecycleGateway({ DEMO_MODE: "true" });
  test("200 with the deprecation headers, charged once", async () => {
    const g = life.g();
    expect(g.gw.deps.config.demoMode).toBe(true);
    const user = await g.newUser({ creditKrw: 100 });
    const key = await g.newKey(user);
    const res = await call(g.url, key.key);
    expect(res.status).toBe(200);
    expect(res.headers.get("x-gateway-warnings")).toBe(
      "deprecated-model=claude-sonnet-4-5; retires=2026-11-30; successor=claude-haiku-4-5",
    );
    expect(res.headers.get("sunset")).toBe("Mon, 30 Nov 2026 00:00:00 GMT");
    await res.text();
    const b = await booksOf(g, user.id);
    expect([b.events.length, b.charges.length, b.held]).toEqual([1, 1, 0n]);
  });
});

describe("demo mode with the simulator off: refused", () => {
  const life = lifecycleGateway({ DEMO_MODE: "true", SIMULATOR: "off" });
  test("400 model_retired before any hold", async () => {
    const g = life.g();
    const user = await g.newUser({ creditKrw: 100 });
    const key = await g.newKey(user);
    const res = await call(g.url, key.key);
    const out: any = await res.json();
    expect([res.status, out.error.code, out.error.type]).toEqual([400, "model_retired", "not_found_error"]);
    const b = await booksOf(g, user.id);
    expect([b.holds, b.charges, b.events, b.balance]).toEqual([[], [], [], 100_000_000n]);
  });
});
