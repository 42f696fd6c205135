/**
 * Two gateway instances (each its own PostgreSQL pool, as two processes) receive the same
 * payment's webhook and return at the same moment: the account is credited once. The provider
 * is one standalone simulator speaking Toss's API, which both instances are configured with as
 * Toss Payments (TOSS_API_BASE), so both read back the same payment.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { postgresAvailable } from "../harness";
import { fastUser, twoInstancesOnPostgres } from "../support/http";
import { startSimulator, type Simulator } from "../../src/sim";
import type { TestGateway } from "../harness";

const AUTH = {
  authorization: `Basic ${Buffer.from("test_sk:").toString("base64")}`,
  "content-type": "application/json",
};

describe.skipIf(!(await postgresAvailable()))("one payment, two instances, one credit", () => {
  let sim: Simulator;
  let two: { a: TestGateway; b: TestGateway; stop: () => Promise<void> };
  beforeAll(async () => {
    sim = await startSimulator();
    two = await twoInstancesOnPostgres({
      PAYMENTS_PROVIDER: "toss",
      TOSS_CLIENT_KEY: "test_ck_two",
      TOSS_SECRET_KEY: "test_sk",
      TOSS_API_BASE: sim.baseUrl("payments"),
      VIDEO_POLL_WORKERS: "0",
    });
  }, 60_000);
  afterAll(async () => {
    await two?.stop();
    await sim?.stop();
  });

  test("the webhook and the return on both instances at once credit once", async () => {
    const { a, b } = two;
    const u = await fastUser(a);
    for (let round = 0; round < 3; round++) {
      const c = (await a.call("POST", "/v1/billing/checkout", { token: u.jwt, body: { amount_krw: 10_000 } })).body;
      // The customer pays at the provider (the simulator's page in place of Toss's widget).
      const made = await fetch(`${sim.baseUrl("payments")}/v1/checkouts`, {
        method: "POST",
        headers: AUTH,
        body: JSON.stringify({
          orderId: c.order_id,
          amount: 10_000,
          successUrl: c.checkout.success_url,
          failUrl: c.checkout.fail_url,
        }),
      });
      const { checkoutUrl } = (await made.json()) as { checkoutUrl: string };
      const paid = await fetch(`${checkoutUrl}/pay`, {
        method: "POST",
        body: new URLSearchParams({ card: "4242" }),
        redirect: "manual",
      });
      const back = new URL(paid.headers.get("location")!);
      const paymentKey = back.searchParams.get("paymentKey")!;
      // Confirmed already (say, by a return on an instance that died before it answered).
      expect(
        (
          await fetch(`${sim.baseUrl("payments")}/v1/payments/confirm`, {
            method: "POST",
            headers: AUTH,
            body: JSON.stringify({ paymentKey, orderId: c.order_id, amount: 10_000 }),
          })
        ).status,
      ).toBe(200);
      const hook = JSON.stringify({
        eventType: "PAYMENT_STATUS_CHANGED",
        data: { paymentKey, orderId: c.order_id, status: "DONE" },
      });
      const deliveries = [a, b, a, b].map((g) =>
        fetch(`${g.url}/v1/billing/webhooks/toss`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: hook,
        }),
      );
      const returns = [a, b].map((g) => fetch(`${g.url}${back.pathname}${back.search}`, { redirect: "manual" }));
      const answers = await Promise.all([...deliveries, ...returns]);
      expect(answers.map((r) => r.status)).toEqual([200, 200, 200, 200, 303, 303]);
    }
    const [books] = await a.gw.deps.db.query<{ balance: string; n: number }>(
      "select (select balance_micro::text from users where id = $1) as balance, (select count(*)::int from ledger_entries where user_id = $1) as n",
      [u.id],
    );
    expect(books).toEqual({ balance: "29100000000", n: 3 });
  });
});
