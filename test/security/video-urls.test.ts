/**
 * Video reference URLs: HTTP(S) only, no credentials in the URL, and (unless the operator sets
 * VIDEO_URL_PRIVATE_HOSTS_ALLOWED=true) no host that is or resolves to a private, loopback or
 * link-local address. Each refusal is a 422 with the `loc` of the URL, before any hold.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestGateway, type TestGateway, type TestUser } from "../harness";
import { fastUser } from "../http/helpers";
import { money, NO_POLL, submit } from "../video/helpers";
import { hostIsNonPublic, isNonPublicIp } from "../../src/lib/url-guard";

const MODEL = "seedance-2-0";

describe("video reference URLs (default: private hosts refused)", () => {
  let g: TestGateway;
  let user: TestUser;
  let key: string;
  beforeAll(async () => {
    g = await startTestGateway({ db: "pglite", env: NO_POLL });
    user = await fastUser(g, { creditKrw: 100_000 });
    key = (await g.newKey(user)).key;
  }, 60_000);
  afterAll(async () => {
    await g?.stop();
  });

  const refused: [string, Record<string, unknown>, (string | number)[], string][] = [
    ["credentials in an image URL", { images: ["https://user:secret@example.com/a.png"] }, ["body", "images", 0], "url_credentials"],
    ["a user name alone", { image: "https://user@example.com/a.png" }, ["body", "image"], "url_credentials"],
    ["loopback literal", { images: ["https://example.com/ok.png", "http://127.0.0.1:8080/a.png"] }, ["body", "images", 1], "url_not_allowed"],
    ["cloud metadata (link-local)", { images: ["http://169.254.169.254/latest/meta-data/"] }, ["body", "images", 0], "url_not_allowed"],
    ["private 10/8", { videos: ["http://10.0.0.5/v.mp4"] }, ["body", "videos", 0], "url_not_allowed"],
    ["private 192.168/16", { images: ["https://example.com/a.png"], audios: ["http://192.168.1.1/a.mp3"] }, ["body", "audios", 0], "url_not_allowed"],
    ["IPv6 loopback", { images: ["http://[::1]/a.png"] }, ["body", "images", 0], "url_not_allowed"],
    ["IPv4-mapped IPv6 loopback", { images: ["http://[::ffff:127.0.0.1]/a.png"] }, ["body", "images", 0], "url_not_allowed"],
    ["decimal-encoded loopback", { images: ["http://2130706433/a.png"] }, ["body", "images", 0], "url_not_allowed"],
    ["a name resolving to loopback", { images: ["http://localhost/a.png"] }, ["body", "images", 0], "url_not_allowed"],
    ["non-HTTP(S) scheme", { images: ["file:///etc/passwd"] }, ["body", "images", 0], ""],
  ];
  for (const [name, refs, loc, type] of refused) {
    test(`${name}: 422 at ${JSON.stringify(loc)}, nothing held`, async () => {
      const before = await money(g, user);
      const r = await submit(g, key, { model: MODEL, prompt: "a red kite", duration_seconds: 5, ...refs });
      expect(r.status).toBe(422);
      const issue = r.body.detail.find((d: any) => JSON.stringify(d.loc) === JSON.stringify(loc));
      expect(issue).toBeDefined();
      if (type) expect(issue.type).toBe(type);
      // The secret of a credentialed URL is not echoed back.
      expect(JSON.stringify(r.body)).not.toContain("secret@");
      expect(await money(g, user)).toEqual(before);
    });
  }

  test("public hosts (and names that do not resolve here) are accepted", async () => {
    const r = await submit(g, key, { model: MODEL, prompt: "a red kite", duration_seconds: 5, images: ["https://example.com/a.png", "http://8.8.8.8/b.png"] });
    expect(r.status).toBe(202);
  });
});

describe("VIDEO_URL_PRIVATE_HOSTS_ALLOWED=true", () => {
  test("private hosts are accepted; credentials still are not", async () => {
    const g = await startTestGateway({ db: "pglite", env: { ...NO_POLL, VIDEO_URL_PRIVATE_HOSTS_ALLOWED: "true" } });
    try {
      const u = await fastUser(g, { creditKrw: 100_000 });
      const k = (await g.newKey(u)).key;
      expect((await submit(g, k, { model: MODEL, prompt: "x", duration_seconds: 5, images: ["http://127.0.0.1/a.png"] })).status).toBe(202);
      expect((await submit(g, k, { model: MODEL, prompt: "x", duration_seconds: 5, images: ["http://u:p@127.0.0.1/a.png"] })).status).toBe(422);
    } finally {
      await g.stop();
    }
  }, 60_000);
});

describe("url-guard", () => {
  test("address classes", () => {
    for (const ip of ["127.0.0.1", "10.1.2.3", "172.16.0.1", "172.31.255.255", "192.168.0.1", "169.254.1.1", "100.64.0.1", "0.0.0.0", "::1", "::", "fe80::1", "fd00::1", "::ffff:10.0.0.1", "224.0.0.1"]) {
      expect({ ip, blocked: isNonPublicIp(ip) }).toEqual({ ip, blocked: true });
    }
    for (const ip of ["8.8.8.8", "1.1.1.1", "172.32.0.1", "2606:4700::1111", "::ffff:8.8.8.8"]) {
      expect({ ip, blocked: isNonPublicIp(ip) }).toEqual({ ip, blocked: false });
    }
  });

  test("hosts: literals in any spelling, localhost names, and a DNS answer within the deadline", async () => {
    for (const u of ["http://0x7f.1/", "http://017700000001/", "http://127.1/", "http://[0:0:0:0:0:ffff:7f00:1]/", "http://LOCALHOST./", "http://api.localhost/"]) {
      expect({ u, refused: await hostIsNonPublic(u, 500) }).toEqual({ u, refused: true });
    }
    const t = performance.now();
    expect(await hostIsNonPublic("https://no-such-host.invalid/a.png", 500)).toBe(false);
    expect(performance.now() - t).toBeLessThan(1500);
  });
});
