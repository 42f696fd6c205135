/**
 * Issue 28 #15: count_tokens is free to the client but calls Anthropic on the operator's
 * credential, so it is throttled per key and per account (429 in Anthropic's envelope with
 * Retry-After, no upstream call), an account with no credit gets the gateway's estimate
 * without any upstream call, and every count is recorded in gateway_count_tokens_total.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { proxiedGateway, type RecordingProxy } from "../support/chat";
import type { TestGateway } from "../harness";
import { books, postMessages, tenant } from "./helpers";

setDefaultTimeout(30_000);

const body = { model: "claude-haiku-4-5", messages: [{ role: "user", content: "count these words please" }] };
const COUNT = "/v1/messages/count_tokens";

describe("count_tokens guard", () => {
  let g: TestGateway;
  let proxy: RecordingProxy;
  beforeAll(async () => {
    ({ g, proxy } = await proxiedGateway(["anthropic"], {
      COUNT_TOKENS_RPM_PER_KEY: "5",
      COUNT_TOKENS_RPM_PER_ACCOUNT: "8",
    }));
  }, 60_000);
  afterAll(async () => {
    await g?.stop();
    proxy?.stop();
  });

  const upstreamCounts = () => proxy.bodies.filter((b) => b.path.endsWith("/count_tokens")).length;
  const recorded = (outcome: string) => g.gw.deps.metrics.countTokens.get({ outcome });

  test("past the key's rate: 429 rate_limit_error with Retry-After, and Anthropic is not asked", async () => {
    const { user, key } = await tenant(g, 1000);
    proxy.clear();
    const before = recorded("upstream");
    for (let i = 0; i < 5; i++) {
      const r = await postMessages(g, key.key, body, COUNT);
      expect(r.status).toBe(200);
      expect(r.headers.get("x-token-count-source")).toBe("anthropic");
    }
    const over = await postMessages(g, key.key, body, COUNT);
    expect(over.status).toBe(429);
    expect(Number(over.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    const e: any = await over.json();
    expect(e).toMatchObject({ type: "error", error: { type: "rate_limit_error" } });
    expect(e.error.message).toContain("count_tokens");
    expect(upstreamCounts()).toBe(5);
    expect(recorded("upstream") - before).toBe(5);

    // Another key of the account has its own window, but the account's is shared: 8 in all.
    const other = await g.newKey(user);
    for (let i = 0; i < 3; i++) expect((await postMessages(g, other.key, body, COUNT)).status).toBe(200);
    const acct = await postMessages(g, other.key, body, COUNT);
    expect(acct.status).toBe(429);
    expect(((await acct.json()) as any).error.type).toBe("rate_limit_error");
    expect(upstreamCounts()).toBe(8);
    // Never a hold or a charge.
    const b = await books(g, user.id);
    expect(b.holds).toHaveLength(0);
    expect(b.charges).toHaveLength(0);
  });

  test("an account with no credit gets the estimate without any upstream call", async () => {
    const { key } = await tenant(g, 0);
    proxy.clear();
    const before = recorded("no_credit");
    const r = await postMessages(g, key.key, body, COUNT);
    expect(r.status).toBe(200);
    expect(r.headers.get("x-token-count-source")).toBe("estimate");
    expect(((await r.json()) as any).input_tokens).toBeGreaterThan(0);
    expect(upstreamCounts()).toBe(0);
    expect(recorded("no_credit") - before).toBe(1);
  });
});
