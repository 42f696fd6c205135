/**
 * Where may a URL we pass on point? Refuses hosts that are, or resolve to, private, loopback,
 * link-local or otherwise non-public addresses, so a client cannot make a provider (or
 * anything on our side) fetch from the gateway's own network. DNS is bounded by a timeout.
 */
import { lookup } from "node:dns/promises";
import { cidrContains, parseCidr, parseIp, type Cidr } from "./cidr";

/** Non-public ranges (IPv4 ones also match in their ::ffff: mapped form). */
const BLOCKED: Cidr[] = [
  "0.0.0.0/8", // "this" network
  "10.0.0.0/8",
  "100.64.0.0/10", // carrier-grade NAT
  "127.0.0.0/8", // loopback
  "169.254.0.0/16", // link-local (cloud metadata lives here)
  "172.16.0.0/12",
  "192.0.0.0/24",
  "192.168.0.0/16",
  "198.18.0.0/15", // benchmarking
  "224.0.0.0/4", // multicast
  "240.0.0.0/4", // reserved, broadcast
  "::/128",
  "::1/128",
  "64:ff9b::/96", // NAT64 of an IPv4 address
  "fc00::/7", // unique local
  "fe80::/10", // link-local
  "ff00::/8", // multicast
].map((c) => parseCidr(c)!);

/** True when `ip` (a literal address) is not a public unicast address. */
export function isNonPublicIp(ip: string): boolean {
  const v = parseIp(ip);
  return v !== null && BLOCKED.some((c) => cidrContains(c, v));
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
