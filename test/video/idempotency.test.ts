/**
 * Idempotency-Key on POST /v1/video/generations (docs/decisions.md #8): scoped to the API key; the
 * same key and body within 24 h replays the original 202 and creates nothing; a different
 * body is 422; a request still being accepted is 409; a request that failed leaves the key free.
 */
import { afterAll, beforeAll, expect, test, setDefaultTimeout } from "bun:test";
import { startTestGateway, type TestGateway, type TestUser } from "../harness";
import { money, NO_POLL, pollUntilFinal, simCalls, submit } from "./helpers";

// A loaded machine (several suites at once) makes sign-ups and lifecycles slow.
setDefaultTimeout(30_000);

let g: TestGateway;
let user: TestUser;
let key: { id: string; key: string };

beforeAll(async () => {
  g = await startTestGateway({ db: "pglite", env: NO_POLL });
  user = await g.newUser({ creditKrw: 200_000 });
  key = await g.newKey(user);
}, 60_000);
afterAll(() => g.stop());

const jobsOfKey = async (keyId: string) =>
  Number(
    (
      await g.gw.deps.db.query<{ n: number }>("select count(*)::int as n from video_jobs where key_id = $1", [keyId])
    )[0]!.n,
  );

test("the same key and body replay the original 202 and create nothing", async () => {
  const k = await g.newKey(user);
  const idem = { "idempotency-key": `replay-${crypto.randomUUID()}` };
  const body = { model: "seedance-2-0", prompt: "replay me [sim:video_ms=10]", duration_seconds: 5 };
  const creates0 = simCalls(g.gw.sim!.stats(), "seedance", "POST");
  const first = await submit(g, k.key, body, idem);
  expect(first.status).toBe(202);
  const held = await money(g, user);

  // Key order does not matter: the body is compared as canonical JSON.
  const again = await submit(g, k.key, { duration_seconds: 5, prompt: body.prompt, model: body.model }, idem);
  expect(again.status).toBe(202);
  expect(again.body).toEqual(first.body);
  expect(again.headers.get("idempotent-replayed")).toBe("true");
  expect(await money(g, user)).toEqual(held);
  expect(await jobsOfKey(k.id)).toBe(1);
  expect(simCalls(g.gw.sim!.stats(), "seedance", "POST") - creates0).toBe(1);

  // Even after the job finished, the replay is the original response.
  const done = await pollUntilFinal(g, k.key, first.body.job_id);
  expect(done.status).toBe("succeeded");
  const late = await submit(g, k.key, body, idem);
  expect(late.status).toBe(202);
  expect(late.body.status).toBe("processing");
  expect(late.body.job_id).toBe(first.body.job_id);
});

test("the same key with a different body is 422 idempotency_key_reused", async () => {
  const idem = { "idempotency-key": `reuse-${crypto.randomUUID()}` };
  const first = await submit(g, key.key, { prompt: "one" }, idem);
  expect(first.status).toBe(202);
  const before = await money(g, user);
  const count = await jobsOfKey(key.id);
  const other = await submit(g, key.key, { prompt: "two" }, idem);
  expect(other.status).toBe(422);
  expect(other.body.detail.error).toBe("idempotency_key_reused");
  expect(await money(g, user)).toEqual(before);
  expect(await jobsOfKey(key.id)).toBe(count);
});

test("while the first request is still being accepted, the same key is 409", async () => {
  const idem = { "idempotency-key": `inflight-${crypto.randomUUID()}` };
  // The upstream takes 600 ms to accept the task, so the first request is still in flight.
  const body = { model: "seedance-2-0", prompt: "slow accept [sim:latency=600]" };
  const first = submit(g, key.key, body, idem);
  await Bun.sleep(150);
  const second = await submit(g, key.key, body, idem);
  expect(second.status).toBe(409);
  expect(second.body.detail.error).toBe("idempotency_in_progress");
  const r1 = await first;
  expect(r1.status).toBe(202);
  const third = await submit(g, key.key, body, idem);
  expect(third.status).toBe(202);
  expect(third.body.job_id).toBe(r1.body.job_id);
});

test("the key is scoped to the API key: another key with the same value makes its own job", async () => {
  const idem = { "idempotency-key": `scoped-${crypto.randomUUID()}` };
  const other = await g.newKey(user);
  const a = await submit(g, key.key, { prompt: "scoped" }, idem);
  const b = await submit(g, other.key, { prompt: "scoped" }, idem);
  expect(a.status).toBe(202);
  expect(b.status).toBe(202);
  expect(b.body.job_id).not.toBe(a.body.job_id);
});

test("a request that failed (validation, credits, upstream) leaves the key free for a retry", async () => {
  const poor = await g.newUser({ creditKrw: 500 });
  const k = await g.newKey(poor);
  const idem = { "idempotency-key": `retry-${crypto.randomUUID()}` };
  // 400 (model rule), then 402, then the upstream fails once: none of them keeps the key.
  expect((await submit(g, k.key, { model: "kling-v3", prompt: "retry" }, idem)).status).toBe(400);
  const body = { model: "seedance-2-0", duration_seconds: 5, prompt: "retry [sim:fail=503x1]" };
  expect((await submit(g, k.key, body, idem)).status).toBe(402);
  await g.credit(poor.id, 10_000);
  const failed = await submit(g, k.key, body, idem);
  expect(failed.status).toBe(502);
  const ok = await submit(g, k.key, body, idem);
  expect(ok.status).toBe(202);
  expect(ok.headers.get("idempotent-replayed")).toBeNull();
  expect(await money(g, poor)).toEqual({ balance: 10_500, held: 700 });
});

test("after 24 hours the key may be used again", async () => {
  const idem = { "idempotency-key": `window-${crypto.randomUUID()}` };
  const first = await submit(g, key.key, { prompt: "window" }, idem);
  expect(first.status).toBe(202);
  await g.gw.deps.db.query(
    "update video_idempotency set created_at = now() - interval '25 hours' where key_id = $1 and idem_key = $2",
    [key.id, idem["idempotency-key"]],
  );
  const second = await submit(g, key.key, { prompt: "window" }, idem);
  expect(second.status).toBe(202);
  expect(second.body.job_id).not.toBe(first.body.job_id);
  expect(second.headers.get("idempotent-replayed")).toBeNull();
});
