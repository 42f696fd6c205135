/** Shared helpers for the video tests: fast poll settings, money snapshots, waiting for jobs. */
import { expect } from "bun:test";
import type { TestGateway, TestUser } from "../harness";

/** Poll fast so lifecycles take a fraction of a second against the simulator. */
export const FAST_POLL = { VIDEO_POLL_INITIAL_MS: "30", VIDEO_POLL_MAX_MS: "80", VIDEO_SWEEP_INTERVAL_MS: "3600000" };
/** No polling at all: jobs stay `processing` until a test drives `pollOnce` itself. */
export const NO_POLL = { ...FAST_POLL, VIDEO_POLL_WORKERS: "0" };

export interface Money {
  balance: number;
  held: number;
}

export async function money(g: TestGateway, user: TestUser): Promise<Money> {
  const r = await g.call("GET", "/v1/me", { token: user.jwt });
  expect(r.status).toBe(200);
  return { balance: Number(r.body.balance_krw), held: Number(r.body.held_krw) };
}

export function submit(g: TestGateway, key: string, body: unknown, headers: Record<string, string> = {}) {
  return g.call("POST", "/v1/video/generations", { token: key, body, headers });
}

/** Polls `GET /v1/jobs/{id}` until the job leaves `processing`. */
export async function waitJob(g: TestGateway, key: string, id: string, timeoutMs = 10_000): Promise<any> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const r = await g.call("GET", `/v1/jobs/${id}`, { token: key });
    expect(r.status).toBe(200);
    if (r.body.status !== "processing") return r.body;
    if (Date.now() > until) throw new Error(`job ${id} still processing after ${timeoutMs} ms`);
    await Bun.sleep(25);
  }
}

/** Upstream calls the simulator saw for `provider` whose route starts with `prefix`. */
export function simCalls(
  stats: { calls: Record<string, Record<string, number>> },
  provider: string,
  prefix: string,
): number {
  return Object.entries(stats.calls[provider] ?? {})
    .filter(([route]) => route.startsWith(prefix))
    .reduce((n, [, c]) => n + c, 0);
}

/** Drives the main-thread poller by hand (`pollOnce`) until the job leaves `processing`. */
export async function pollUntilFinal(g: TestGateway, key: string, id: string, timeoutMs = 10_000): Promise<any> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    await g.gw.video.pool.pollOnce();
    const r = await g.call("GET", `/v1/jobs/${id}`, { token: key });
    expect(r.status).toBe(200);
    if (r.body.status !== "processing") return r.body;
    if (Date.now() > until) throw new Error(`job ${id} still processing after ${timeoutMs} ms`);
    await Bun.sleep(20);
  }
}

/** Makes a job due for polling now (tests that drive `pollOnce` do not wait for backoff). */
export async function makeDue(g: TestGateway, id: string): Promise<void> {
  await g.gw.deps.db.query("update video_jobs set next_poll_at = now() where id = $1", [id]);
}
