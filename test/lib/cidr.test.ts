import { describe, expect, test } from "bun:test";
import { cidrContains, ipAllowed, parseCidr, parseIp } from "../../src/lib/cidr";

const MAPPED = 0xffffn << 32n;

describe("parseIp", () => {
  test("IPv4 maps into ::ffff:0:0/96", () => {
    expect(parseIp("0.0.0.0")).toBe(MAPPED);
    expect(parseIp("1.2.3.4")).toBe(MAPPED | 0x01020304n);
    expect(parseIp("255.255.255.255")).toBe(MAPPED | 0xffffffffn);
    expect(parseIp(" 10.0.0.1 ")).toBe(MAPPED | 0x0a000001n);
  });

  test("IPv6 with and without :: compression", () => {
    expect(parseIp("::")).toBe(0n);
    expect(parseIp("::1")).toBe(1n);
    expect(parseIp("1::")).toBe(1n << 112n);
    expect(parseIp("2001:db8::1")).toBe((0x2001n << 112n) | (0xdb8n << 96n) | 1n);
    expect(parseIp("2001:0db8:0000:0000:0000:0000:0000:0001")).toBe(parseIp("2001:db8::1"));
    expect(parseIp("2001:DB8::1")).toBe(parseIp("2001:db8::1"));
    expect(parseIp("1:2:3:4:5:6:7:8")).toBe(0x00010002000300040005000600070008n);
    expect(parseIp("1:2:3:4:5:6:7::")).toBe(0x00010002000300040005000600070000n);
    expect(parseIp("::2:3:4:5:6:7:8")).toBe(0x00000002000300040005000600070008n);
    expect(parseIp("[::1]")).toBe(1n);
  });

  test("::ffff:a.b.c.d is the same address as a.b.c.d; other dotted tails work too", () => {
    expect(parseIp("::ffff:1.2.3.4")).toBe(parseIp("1.2.3.4"));
    expect(parseIp("::FFFF:127.0.0.1")).toBe(parseIp("127.0.0.1"));
    expect(parseIp("0:0:0:0:0:ffff:1.2.3.4")).toBe(parseIp("1.2.3.4"));
    expect(parseIp("::1.2.3.4")).toBe(0x01020304n);
    expect(parseIp("64:ff9b::192.0.2.33")).toBe((0x64n << 112n) | (0xff9bn << 96n) | 0xc0000221n);
    expect(parseIp("1:2:3:4:5:6:1.2.3.4")).toBe(0x0001000200030004000500060102_0304n);
  });

  test("bad inputs are null, never an exception", () => {
    const bad = [
      "",
      " ",
      "1.2.3",
      "1.2.3.4.5",
      "256.1.1.1",
      "1.2.3.-1",
      "01.2.3.4",
      "1.2.3.04",
      "a.b.c.d",
      "1.2.3.4/8",
      ":",
      ":::",
      "1::2::3",
      "12345::",
      "g::1",
      "1:2:3:4:5:6:7:8:9",
      "1:2:3:4:5:6:7:8::",
      "::1:2:3:4:5:6:7:8",
      "1:2:3:4:5::6:7:8:9",
      "1::2:3:4:5:6:7:8:9:10",
      "1:2:3:4:5:6:7:1.2.3.4",
      "::ffff:1.2.3",
      "::ffff:1.2.3.256",
      "1.2.3.4::",
      "fe80::1%eth0",
      "localhost",
      "[::1",
      "1.2.3.4:80",
      "::ffff:1.2.3.4:80",
    ];
    for (const s of bad) expect([s, parseIp(s)]).toEqual([s, null]);
  });
});

describe("parseCidr and cidrContains", () => {
  test("IPv4 prefixes count within the mapped space", () => {
    const c = parseCidr("10.0.0.0/8")!;
    expect(c).toEqual({ base: MAPPED | 0x0a000000n, bits: 104 });
    expect(cidrContains(c, parseIp("10.255.1.2")!)).toBe(true);
    expect(cidrContains(c, parseIp("11.0.0.0")!)).toBe(false);
    expect(cidrContains(c, parseIp("::ffff:10.1.1.1")!)).toBe(true);
    // Host bits are masked off.
    expect(parseCidr("10.1.2.3/8")).toEqual(c);
    // No length: a single address.
    expect(parseCidr("192.0.2.1")).toEqual({ base: MAPPED | 0xc0000201n, bits: 128 });
    const all4 = parseCidr("0.0.0.0/0")!;
    expect(cidrContains(all4, parseIp("8.8.8.8")!)).toBe(true);
    expect(cidrContains(all4, parseIp("::1")!)).toBe(false);
  });

  test("IPv6 prefixes", () => {
    const c = parseCidr("2001:db8::/32")!;
    expect(c.bits).toBe(32);
    expect(cidrContains(c, parseIp("2001:db8:ffff::1")!)).toBe(true);
    expect(cidrContains(c, parseIp("2001:db9::1")!)).toBe(false);
    const all = parseCidr("::/0")!;
    expect(all.bits).toBe(0);
    expect(cidrContains(all, parseIp("1.2.3.4")!)).toBe(true);
    expect(cidrContains(parseCidr("::1/128")!, parseIp("::1")!)).toBe(true);
    expect(cidrContains(parseCidr("::1/128")!, parseIp("::2")!)).toBe(false);
  });

  test("malformed ranges are null", () => {
    for (const s of [
      "10.0.0.0/33",
      "10.0.0.0/-1",
      "10.0.0.0/",
      "/8",
      "10.0.0.0/8/8",
      "10.0.0.0/a",
      "::/129",
      "::/1000",
      "x/8",
      "1:2:3:4:5::6:7:8:9/64",
      "",
    ]) {
      expect([s, parseCidr(s)]).toEqual([s, null]);
    }
  });
});

describe("ipAllowed", () => {
  test("matches any entry; malformed entries or addresses never match", () => {
    expect(ipAllowed("127.0.0.1", ["127.0.0.1"])).toBe(true);
    expect(ipAllowed("::ffff:127.0.0.1", ["127.0.0.1"])).toBe(true);
    expect(ipAllowed("127.0.0.1", ["10.0.0.0/8"])).toBe(false);
    expect(ipAllowed("10.9.8.7", ["192.0.2.0/24", "10.0.0.0/8"])).toBe(true);
    expect(ipAllowed("2001:db8::5", ["2001:db8::/64"])).toBe(true);
    expect(ipAllowed("127.0.0.1", ["garbage", "127.0.0.1"])).toBe(true);
    expect(ipAllowed("127.0.0.1", ["garbage"])).toBe(false);
    expect(ipAllowed("garbage", ["0.0.0.0/0", "::/0"])).toBe(false);
    expect(ipAllowed("", ["0.0.0.0/0"])).toBe(false);
    expect(ipAllowed("127.0.0.1", [])).toBe(false);
  });
});
