/**
 * Where may a URL we pass on point? Refuses hosts that are, or resolve to, private, loopback,
 * link-local or otherwise non-public addresses, so a client cannot make a provider (or
 * anything on our side) fetch from the gateway's own network. DNS is bounded by a timeout.
 */
import { lookup } from "node:dns/promises";
import { cidrContains, parseCidr, parseIp, type Cidr } from "./cidr";

/** Non-public ranges (IPv4 ones are written in, and match, the ::ffff: mapped form). */
const BLOCKED: Cidr[] = [
  "0.0.0.0/8", // "this" network
  "10.0.0.0/8",
  "100.64.0.0/10", // carrier-grade NAT
  "127.0.0.0/8", // loopback
  "169.254.0.0/16", // link-local (cloud metadata lives here)
  "172.16.0.0/12",
  "192.0.0.0/24",
  "192.0.2.0/24", // documentation (TEST-NET-1..3)
  "198.51.100.0/24",
  "203.0.113.0/24",
  "192.168.0.0/16",
  "198.18.0.0/15", // benchmarking
  "224.0.0.0/4", // multicast
  "240.0.0.0/4", // reserved, broadcast
  "::/128",
  "::1/128",
  "64:ff9b:1::/48", // local-use NAT64 (RFC 8215)
  "100::/64", // discard-only
  "2001:db8::/32", // documentation
  "fc00::/7", // unique local
  "fe80::/10", // link-local
  "fec0::/10", // site-local (deprecated, still routed inside some networks)
  "ff00::/8", // multicast
].map((c) => parseCidr(c)!);

const V4_MASK = 0xffffffffn;
const inPrefix = (v: bigint, prefix: bigint, bits: number) => v >> BigInt(128 - bits) === prefix >> BigInt(128 - bits);

/**
 * The IPv4 addresses an IPv6 address carries, for every form that reaches an IPv4 host
 * through it: IPv4-compatible ::a.b.c.d (::7f00:1), IPv4-translated ::ffff:0:a.b.c.d,
 * NAT64 64:ff9b::/96, 6to4 2002:AABB:CCDD::/48 and Teredo 2001:0::/32 (its server, and its
 * client stored inverted). IPv4-mapped ::ffff:a.b.c.d needs nothing: BLOCKED's IPv4 ranges
 * are written in that form.
 */
function embeddedIpv4(v: bigint): bigint[] {
  if (v >> 32n === 0n) return [v & V4_MASK];
  if (v >> 32n === 0xffff0000n) return [v & V4_MASK];
  if (inPrefix(v, 0x0064ff9bn << 96n, 96)) return [v & V4_MASK];
  if (inPrefix(v, 0x2002n << 112n, 16)) return [(v >> 80n) & V4_MASK];
  if (inPrefix(v, 0x20010000n << 96n, 32)) return [(v >> 64n) & V4_MASK, (v & V4_MASK) ^ V4_MASK];
  return [];
}

const blocked = (v: bigint) => BLOCKED.some((c) => cidrContains(c, v));

/** True when `ip` (a literal address) is not a public unicast address, in any spelling. */
export function isNonPublicIp(ip: string): boolean {
  const v = parseIp(ip);
  if (v === null) return false;
  return blocked(v) || embeddedIpv4(v).some((v4) => blocked((0xffffn << 32n) | v4));
}

/**
 * True when the URL's host is a non-public address literal, `localhost`, or a name that
 * resolves (within `timeoutMs`) to a non-public address. A name that does not resolve, or not
 * in time, is not refused: the gateway never fetches it, and the provider's own lookup decides.
 */
export async function hostIsNonPublic(url: string, timeoutMs: number): Promise<boolean> {
  let host: string;
  try {
    // WHATWG parsing normalizes 0x7f.1, 2130706433, [::ffff:7f00:1] and friends to canonical form.
    host = new URL(url).hostname.toLowerCase();
  } catch {
    return false;
  }
  if (host.startsWith("[") && host.endsWith("]")) host = host.slice(1, -1);
  if (host.endsWith(".")) host = host.slice(0, -1);
  if (parseIp(host) !== null) return isNonPublicIp(host);
  if (host === "localhost" || host.endsWith(".localhost")) return true;
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    const addrs = await Promise.race([
      lookup(host, { all: true, verbatim: true }),
      new Promise<null>((resolve) => (timer = setTimeout(() => resolve(null), timeoutMs))),
    ]);
    return !!addrs && addrs.some((a) => isNonPublicIp(a.address));
  } catch {
    return false;
  } finally {
    clearTimeout(timer);
  }
}
