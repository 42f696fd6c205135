/**
 * A rate-limited client cannot fill the disk with request lines (issue 28): per key, route and
 * error the first refusal of each second is written as its request line and the rest of that
 * second are counted into one `"msg":"requests refused"` line. 1,000 refused calls write a
 * handful of lines, and every refusal is accounted for (its own line or a count). Answered
 * calls keep one line each.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestGateway, type TestGateway } from "../harness";
import { fastUser } from "../support/http";
import { captureLog } from "../support/capture-log";

describe("refusals in the request log", () => {
  let g: TestGateway;
  beforeAll(async () => {
    g = await startTestGateway({ env: { RATE_LIMIT_RPM: "1", LOG_REQUESTS: "on" } });
  }, 60_000);
  afterAll(() => g?.stop());

  test("1,000 refused calls of one key write a few lines that count all of them", async () => {
    const user = await fastUser(g);
    const { key, id: keyId } = await g.newKey(user);
    const out = await captureLog(async () => {
      expect((await g.call("GET", "/v1/me", { token: key })).status).toBe(200);
      for (let batch = 0; batch < 50; batch++) {
        const answers = await Promise.all(Array.from({ length: 20 }, () => g.call("GET", "/v1/me", { token: key })));
        for (const a of answers) expect(a.status).toBe(429);
      }
      await Bun.sleep(1500); // the last second's count is written once it is over
    });
    const lines = out
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l))
      .filter((l) => l.key_id === keyId);
    const answered = lines.filter((l) => l.msg === "request" && l.status === 200);
    const own = lines.filter((l) => l.msg === "request" && l.status === 429);
    const folded = lines.filter((l) => l.msg === "requests refused");
    expect(answered.length).toBe(1);
    for (const l of [...own, ...folded]) {
      expect(l.error).toBe("rate_limited");
      expect(l.route).toBe("/v1/me");
    }
    // Every refusal is in the log once: as its own line or in a count.
    expect(own.length + folded.reduce((a, l) => a + l.count, 0)).toBe(1000);
    // One line a second at most, plus its count: far from one line per call.
    expect(own.length + folded.length).toBeLessThan(60);
    expect(own.length).toBeGreaterThanOrEqual(1);
  }, 60_000);
});
