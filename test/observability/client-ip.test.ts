/**
 * The request log line's `client_ip` (docs/observability.md): the socket's peer, and
 * X-Forwarded-For only when that peer is a trusted proxy (the right-most address that is not
 * one itself). From any other peer a forwarded address is ignored, so nobody can write another
 * address into the log.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestGateway, type TestGateway } from "../harness";
import { captureLog } from "../support/capture-log";
import { eventually } from "../support/chat";

/** The `client_ip` of the log line of a GET /v1/models sent with these headers. */
async function clientIp(g: TestGateway, headers: Record<string, string>): Promise<string | undefined> {
  let id = "";
  let line: any;
  const out = captureLog(async () => {
    const r = await fetch(g.url + "/v1/models", { headers });
    await r.text();
    id = r.headers.get("x-request-id")!;
    await eventually(() => false, 200); // the line follows the answer
  });
  for (const l of (await out).split("\n"))
    if (l.includes(`"request_id":"${id}"`) && l.includes('"msg":"request"')) line = JSON.parse(l);
  expect(line).toBeDefined();
  return line.client_ip;
}

describe("client_ip in the request log line", () => {
  let direct: TestGateway;
  let proxied: TestGateway;
  beforeAll(async () => {
    direct = await startTestGateway();
    proxied = await startTestGateway({ env: { TRUSTED_PROXIES: "127.0.0.1/32, 10.0.0.0/8" } });
  });
  afterAll(async () => {
    await direct?.stop();
    await proxied?.stop();
  });

  test("without trusted proxies: the peer, whatever X-Forwarded-For says", async () => {
    expect(await clientIp(direct, {})).toBe("127.0.0.1");
    expect(await clientIp(direct, { "x-forwarded-for": "203.0.113.9" })).toBe("127.0.0.1");
  });

  test("from a trusted proxy: the right-most forwarded address that is no trusted proxy", async () => {
    expect(await clientIp(proxied, { "x-forwarded-for": "203.0.113.9" })).toBe("203.0.113.9");
    // A client-written first hop is not believed past the address the proxy saw.
    expect(await clientIp(proxied, { "x-forwarded-for": "198.51.100.4, 203.0.113.9, 10.1.2.3" })).toBe("203.0.113.9");
    expect(await clientIp(proxied, {})).toBe("127.0.0.1");
  });
});
