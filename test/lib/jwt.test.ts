import { describe, expect, test } from "bun:test";
import { createHmac } from "node:crypto";
import { signJwt, verifyJwt } from "../../src/lib/jwt";

const SECRET = "unit-test-secret-0123456789abcdef0123456789";
const NOW = Date.UTC(2025, 0, 1);
const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString("base64url");
const sign = (h: string, b: string, secret = SECRET) =>
  createHmac("sha256", secret).update(`${h}.${b}`).digest("base64url");

describe("jwt", () => {
  test("sign → verify round trip with HS256, iat and exp", () => {
    const t = signJwt({ sub: "user-1", typ: "access" }, SECRET, 3600, NOW);
    const [h, b] = t.split(".");
    expect(JSON.parse(Buffer.from(h!, "base64url").toString())).toEqual({ alg: "HS256", typ: "JWT" });
    const c = verifyJwt(t, SECRET, NOW + 1000)!;
    expect(c).toEqual({ sub: "user-1", typ: "access", iat: NOW / 1000, exp: NOW / 1000 + 3600 });
    expect(JSON.parse(Buffer.from(b!, "base64url").toString())).toEqual(c);
  });

  test("expiry is enforced at exp exactly", () => {
    const t = signJwt({ sub: "u" }, SECRET, 60, NOW);
    expect(verifyJwt(t, SECRET, NOW + 59_999)).not.toBeNull();
    expect(verifyJwt(t, SECRET, NOW + 60_000)).toBeNull();
    expect(verifyJwt(t, SECRET, NOW + 3_600_000)).toBeNull();
  });

  test("a wrong secret, tampered payload or tampered header is refused", () => {
    const t = signJwt({ sub: "u" }, SECRET, 60, NOW);
    const [h, b, s] = t.split(".") as [string, string, string];
    expect(verifyJwt(t, "other-secret-0123456789abcdef0123456789", NOW)).toBeNull();
    expect(
      verifyJwt(`${h}.${b64({ sub: "admin", iat: NOW / 1000, exp: NOW / 1000 + 60 })}.${s}`, SECRET, NOW),
    ).toBeNull();
    expect(verifyJwt(`${b64({ alg: "HS256", typ: "JWT", kid: "x" })}.${b}.${s}`, SECRET, NOW)).toBeNull();
    expect(verifyJwt(`${h}.${b}.`, SECRET, NOW)).toBeNull();
    expect(verifyJwt(`${h}.${b}`, SECRET, NOW)).toBeNull();
    expect(verifyJwt(`${h}.${b}.${s}.x`, SECRET, NOW)).toBeNull();
  });

  test("every altered signature character is refused, including the last one's unused bits", () => {
    const t = signJwt({ sub: "u" }, SECRET, 60, NOW);
    const [h, b, s] = t.split(".") as [string, string, string];
    expect(s.length).toBe(43); // 32 bytes: the last character carries 4 bits + 2 unused bits
    const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let refused = 0;
    for (const c of alphabet) {
      if (c === s.at(-1)) continue;
      expect(verifyJwt(`${h}.${b}.${s.slice(0, -1)}${c}`, SECRET, NOW)).toBeNull();
      refused++;
    }
    expect(refused).toBe(63);
    // Padding or whitespace around the signature is not the same token either.
    expect(verifyJwt(`${h}.${b}.${s}=`, SECRET, NOW)).toBeNull();
    expect(verifyJwt(`${h}.${b}.${s} `, SECRET, NOW)).toBeNull();
  });

  test("the algorithm is pinned: none, HS384/HS512 and a missing alg are refused", () => {
    const claims = { sub: "u", iat: NOW / 1000, exp: NOW / 1000 + 60 };
    const b = b64(claims);
    expect(verifyJwt(`${b64({ alg: "none", typ: "JWT" })}.${b}.`, SECRET, NOW)).toBeNull();
    expect(verifyJwt(`${b64({ alg: "None" })}.${b}.`, SECRET, NOW)).toBeNull();
    for (const alg of ["HS384", "HS512", "RS256", undefined]) {
      const h = b64(alg ? { alg, typ: "JWT" } : { typ: "JWT" });
      expect([alg, verifyJwt(`${h}.${b}.${sign(h, b)}`, SECRET, NOW)]).toEqual([alg, null]);
    }
    // The same header with HS256 verifies, so the refusals above are about alg alone.
    const ok = b64({ alg: "HS256", typ: "JWT" });
    expect(verifyJwt(`${ok}.${b}.${sign(ok, b)}`, SECRET, NOW)).toEqual(claims);
  });

  test("claims without a string sub or a numeric exp are refused; garbage never throws", () => {
    const h = b64({ alg: "HS256", typ: "JWT" });
    for (const claims of [
      { exp: NOW / 1000 + 60 },
      { sub: 5, exp: NOW / 1000 + 60 },
      { sub: "u" },
      { sub: "u", exp: "later" },
    ]) {
      const b = b64(claims);
      expect(verifyJwt(`${h}.${b}.${sign(h, b)}`, SECRET, NOW)).toBeNull();
    }
    const notJson = Buffer.from("not json").toString("base64url");
    expect(verifyJwt(`${h}.${notJson}.${sign(h, notJson)}`, SECRET, NOW)).toBeNull();
    for (const junk of ["", ".", "..", "a.b.c", "%%%.%%%.%%%", "eyJ.eyJ.eyJ"])
      expect(verifyJwt(junk, SECRET, NOW)).toBeNull();
  });
});
