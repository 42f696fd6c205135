/**
 * Video reference URLs: HTTP(S) only, no credentials in the URL, and (unless the operator sets
 * VIDEO_URL_PRIVATE_HOSTS_ALLOWED=true) no host that is or resolves to a private, loopback or
 * link-local address. Each refusal is a 422 with the `loc` of the URL, before any hold.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestGateway, type TestGateway, type TestUser } from "../harness";
import { fastUser } from "../support/http";
import { money, NO_POLL, simCalls, submit } from "../video/helpers";
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
    [
      "credentials in an image URL",
      { images: ["https://user:secret@example.com/a.png"] },
      ["body", "images", 0],
      "url_credentials",
    ],
    ["a user name alone", { image: "https://user@example.com/a.png" }, ["body", "image"], "url_credentials"],
    [
      "loopback literal",
      { images: ["https://example.com/ok.png", "http://127.0.0.1:8080/a.png"] },
      ["body", "images", 1],
      "url_not_allowed",
    ],
    [
      "cloud metadata (link-local)",
      { images: ["http://169.254.169.254/latest/meta-data/"] },
      ["body", "images", 0],
      "url_not_allowed",
    ],
    ["private 10/8", { videos: ["http://10.0.0.5/v.mp4"] }, ["body", "videos", 0], "url_not_allowed"],
    [
      "private 192.168/16",
      { images: ["https://example.com/a.png"], audios: ["http://192.168.1.1/a.mp3"] },
      ["body", "audios", 0],
      "url_not_allowed",
    ],
    ["IPv6 loopback", { images: ["http://[::1]/a.png"] }, ["body", "images", 0], "url_not_allowed"],
    [
      "IPv4-mapped IPv6 loopback",
      { images: ["http://[::ffff:127.0.0.1]/a.png"] },
      ["body", "images", 0],
      "url_not_allowed",
    ],
    ["decimal-encoded loopback", { images: ["http://2130706433/a.png"] }, ["body", "images", 0], "url_not_allowed"],
    ["a name resolving to loopback", { images: ["http://localhost/a.png"] }, ["body", "images", 0], "url_not_allowed"],
    ["non-HTTP(S) scheme", { images: ["file:///etc/passwd"] }, ["body", "images", 0], ""],
    // Spellings that parsers read differently, and IPv6 forms of private IPv4 addresses.
    [
      "a backslash before '@' (other parsers see userinfo and host 127.0.0.1)",
      { images: ["http://1.1.1.1\\@127.0.0.1/a.png"] },
      ["body", "images", 0],
      "url_parsing",
    ],
    ["a backslash anywhere", { videos: ["https://example.com\\a.mp4"] }, ["body", "videos", 0], "url_parsing"],
    [
      "userinfo hidden by percent-encoding",
      { image: "http://127.0.0.1%2f@example.com/a.png" },
      ["body", "image"],
      "url_credentials",
    ],
    [
      "IPv4-compatible IPv6 loopback [::7f00:1]",
      { images: ["http://[::7f00:1]/a.png"] },
      ["body", "images", 0],
      "url_not_allowed",
    ],
    [
      "IPv4-compatible IPv6 in dotted form",
      { images: ["http://[::127.0.0.1]/a.png"] },
      ["body", "images", 0],
      "url_not_allowed",
    ],
    [
      "IPv4-translated IPv6 loopback",
      { images: ["http://[::ffff:0:7f00:1]/a.png"] },
      ["body", "images", 0],
      "url_not_allowed",
    ],
    ["6to4 of loopback", { images: ["http://[2002:7f00:1::]/a.png"] }, ["body", "images", 0], "url_not_allowed"],
    [
      "6to4 of cloud metadata",
      { audios: ["http://[2002:a9fe:a9fe::1]/a.mp3"], images: ["https://example.com/a.png"] },
      ["body", "audios", 0],
      "url_not_allowed",
    ],
    [
      "NAT64 of cloud metadata",
      { images: ["http://[64:ff9b::a9fe:a9fe]/a.png"] },
      ["body", "images", 0],
      "url_not_allowed",
    ],
    [
      "Teredo whose client is loopback",
      { images: ["http://[2001:0:4136:e378:8000:63bf:80ff:fffe]/a.png"] },
      ["body", "images", 0],
      "url_not_allowed",
    ],
    ["site-local IPv6", { images: ["http://[fec0::1]/a.png"] }, ["body", "images", 0], "url_not_allowed"],
  ];
  for (const [name, refs, loc, type] of refused) {
    test(`${name}: 422 at ${JSON.stringify(loc)}, nothing held, nothing forwarded`, async () => {
      const before = await money(g, user);
      const submits = simCalls(g.gw.sim!.stats(), "seedance", "POST ");
      const r = await submit(g, key, { model: MODEL, prompt: "a red kite", duration_seconds: 5, ...refs });
      expect(r.status).toBe(422);
      const issue = r.body.detail.find((d: any) => JSON.stringify(d.loc) === JSON.stringify(loc));
      expect(issue).toBeDefined();
      if (type) expect(issue.type).toBe(type);
      // The secret of a credentialed URL is not echoed back.
      expect(JSON.stringify(r.body)).not.toContain("secret@");
      expect(await money(g, user)).toEqual(before);
      expect(simCalls(g.gw.sim!.stats(), "seedance", "POST ")).toBe(submits);
    });
  }

  test("an accepted URL is forwarded in its normalised form, not as written", async () => {
    const r = await submit(g, key, {
      model: MODEL,
      prompt: "a red kite",
      duration_seconds: 5,
      images: [
        "HTTPS://Example.COM:443/a/../b.png",
        "http://[2002:808:808::1]/c.png",
        "http://[64:ff9b::808:808]/d.png",
      ],
    });
    expect(r.status).toBe(202);
    const [row] = await g.gw.deps.db.query<{ request: unknown }>("select request from video_jobs where id = $1", [
      r.body.job_id,
    ]);
    const sent = JSON.stringify(typeof row!.request === "string" ? JSON.parse(row!.request) : row!.request);
    expect(sent).toContain('"https://example.com/b.png"');
    expect(sent).not.toContain("Example.COM");
    expect(sent).toContain('"http://[2002:808:808::1]/c.png"');
  });

  test("public hosts (and names that do not resolve here) are accepted", async () => {
    const r = await submit(g, key, {
      model: MODEL,
      prompt: "a red kite",
      duration_seconds: 5,
      images: ["https://example.com/a.png", "http://8.8.8.8/b.png"],
    });
    expect(r.status).toBe(202);
  });
});

describe("VIDEO_URL_PRIVATE_HOSTS_ALLOWED=true", () => {
  test("private hosts are accepted; credentials still are not", async () => {
    const g = await startTestGateway({ db: "pglite", env: { ...NO_POLL, VIDEO_URL_PRIVATE_HOSTS_ALLOWED: "true" } });
    try {
      const u = await fastUser(g, { creditKrw: 100_000 });
      const k = (await g.newKey(u)).key;
      expect(
        (await submit(g, k, { model: MODEL, prompt: "x", duration_seconds: 5, images: ["http://127.0.0.1/a.png"] }))
          .status,
      ).toBe(202);
      expect(
        (await submit(g, k, { model: MODEL, prompt: "x", duration_seconds: 5, images: ["http://u:p@127.0.0.1/a.png"] }))
          .status,
      ).toBe(422);
    } finally {
      await g.stop();
    }
  }, 60_000);
});

describe("url-guard", () => {
  test("address classes", () => {
    for (const ip of [
      "127.0.0.1",
      "10.1.2.3",
      "172.16.0.1",
      "172.31.255.255",
      "192.168.0.1",
      "169.254.1.1",
      "100.64.0.1",
      "0.0.0.0",
      "::1",
      "::",
      "fe80::1",
      "fd00::1",
      "::ffff:10.0.0.1",
      "224.0.0.1",
    ]) {
      expect({ ip, blocked: isNonPublicIp(ip) }).toEqual({ ip, blocked: true });
    }
    // Every IPv6 form that embeds an IPv4 address is judged by that address.
    for (const ip of [
      "::7f00:1",
      "::127.0.0.1",
      "::ffff:0:7f00:1",
      "2002:7f00:1::",
      "2002:a00:1::1",
      "64:ff9b::a9fe:a9fe",
      "2001:0:4136:e378:8000:63bf:80ff:fffe",
      "fec0::1",
      "192.0.2.1",
      "2001:db8::1",
    ]) {
      expect({ ip, blocked: isNonPublicIp(ip) }).toEqual({ ip, blocked: true });
    }
    for (const ip of [
      "8.8.8.8",
      "1.1.1.1",
      "172.32.0.1",
      "2606:4700::1111",
      "::ffff:8.8.8.8",
      "2002:808:808::1",
      "64:ff9b::808:808",
    ]) {
      expect({ ip, blocked: isNonPublicIp(ip) }).toEqual({ ip, blocked: false });
    }
  });

  test("hosts: literals in any spelling, localhost names, and a DNS answer within the deadline", async () => {
    for (const u of [
      "http://0x7f.1/",
      "http://017700000001/",
      "http://127.1/",
      "http://[0:0:0:0:0:ffff:7f00:1]/",
      "http://LOCALHOST./",
      "http://api.localhost/",
    ]) {
      expect({ u, refused: await hostIsNonPublic(u, 500) }).toEqual({ u, refused: true });
    }
    const t = performance.now();
    expect(await hostIsNonPublic("https://no-such-host.invalid/a.png", 500)).toBe(false);
    expect(performance.now() - t).toBeLessThan(1500);
  });
});
