/** IPv4/IPv6 addresses and CIDR ranges: parsing and membership, without dependencies. */

/** Parses an address to a 128-bit bigint (IPv4 mapped into ::ffff:0:0/96), or null. */
export function parseIp(s: string): bigint | null {
  s = s.trim();
  if (s.startsWith("[") && s.endsWith("]")) s = s.slice(1, -1);
  const v4 = parseIpv4(s);
  if (v4 !== null) return (0xffffn << 32n) | v4;
  return parseIpv6(s);
}

function parseIpv4(s: string): bigint | null {
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(s);
  if (!m) return null;
  let v = 0n;
  for (let i = 1; i <= 4; i++) {
    const n = Number(m[i]);
    if (n > 255 || (m[i]!.length > 1 && m[i]!.startsWith("0"))) return null;
    v = (v << 8n) | BigInt(n);
  }
  return v;
}

function parseIpv6(s: string): bigint | null {
  if (!/^[0-9a-fA-F:.]+$/.test(s) || s.split("::").length > 2) return null;
  let tail4: bigint | null = null;
  const lastColon = s.lastIndexOf(":");
  if (s.includes(".")) {
    tail4 = parseIpv4(s.slice(lastColon + 1));
    if (tail4 === null) return null;
    s = s.slice(0, lastColon + 1) + "0:0";
  }
  const [head, rest] = s.includes("::") ? s.split("::") : [s, undefined];
  const hs = head ? head.split(":") : [];
  const ts = rest === undefined ? [] : rest ? rest.split(":") : [];
  // "::" stands for at least one group; more than 7 explicit groups around it is malformed
  // (checked before building the array: a negative length would throw, not return null).
  if (rest !== undefined && hs.length + ts.length > 7) return null;
  const groups = rest === undefined ? hs : [...hs, ...Array(8 - hs.length - ts.length).fill("0"), ...ts];
  if (groups.length !== 8) return null;
  let v = 0n;
  for (const g of groups) {
    if (!/^[0-9a-fA-F]{1,4}$/.test(g)) return null;
    v = (v << 16n) | BigInt(parseInt(g, 16));
  }
  if (tail4 !== null) v = (v & ~0xffffffffn) | tail4;
  return v;
}

export interface Cidr {
  base: bigint;
  bits: number; // prefix length in the 128-bit space
}

/** Parses `addr` or `addr/len` (IPv4 len ≤ 32, IPv6 len ≤ 128), or null when malformed. */
export function parseCidr(s: string): Cidr | null {
  const [addr, len, extra] = s.trim().split("/");
  if (extra !== undefined || !addr) return null;
  const ip = parseIp(addr);
  if (ip === null) return null;
  const isV4 = parseIpv4(addr.trim()) !== null;
  const max = isV4 ? 32 : 128;
  if (len !== undefined && !/^\d{1,3}$/.test(len)) return null;
  const n = len === undefined ? max : Number(len);
  if (n > max) return null;
  const bits = isV4 ? 96 + n : n;
  const mask = bits === 0 ? 0n : ((1n << 128n) - 1n) ^ ((1n << BigInt(128 - bits)) - 1n);
  return { base: ip & mask, bits };
}

export function cidrContains(c: Cidr, ip: bigint): boolean {
  if (c.bits === 0) return true;
  const mask = ((1n << 128n) - 1n) ^ ((1n << BigInt(128 - c.bits)) - 1n);
  return (ip & mask) === c.base;
}

/** True when `ip` (text) falls in any of the entries (text). Malformed entries never match. */
export function ipAllowed(ip: string, entries: readonly string[]): boolean {
  const v = parseIp(ip);
  if (v === null) return false;
  return entries.some((e) => {
    const c = parseCidr(e);
    return c !== null && cidrContains(c, v);
  });
}
