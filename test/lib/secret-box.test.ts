/** The sealing of secrets at rest (BYOK credentials): AES-256-GCM, versioned, bound to a context. */
import { describe, expect, test } from "bun:test";
import { byokContext, SEALED_PREFIX, SecretBox, UnsealError } from "../../src/lib/secret-box";

const box = SecretBox.fromText("0123456789abcdef".repeat(4));
const ctx = byokContext("5f0c6b1e-8a4d-4b9e-9d53-0c1f2e3d4c5b");

describe("SecretBox", () => {
  test("round trip; a fresh IV each time; the clear text is nowhere in the sealed form", () => {
    const plain = "sk-proj-ÄÖ-유니코드-" + "x".repeat(500);
    const a = box.seal(plain, ctx);
    const b = box.seal(plain, ctx);
    expect(a).toStartWith(SEALED_PREFIX);
    expect(a).not.toBe(b);
    expect(a.includes("sk-proj")).toBe(false);
    expect(box.open(a, ctx)).toBe(plain);
    expect(box.open(b, ctx)).toBe(plain);
    expect(box.open(box.seal("", ctx), ctx)).toBe("");
  });

  test("another key, another context, any flipped character or a clear value: UnsealError", () => {
    const sealed = box.seal("sk-secret", ctx);
    expect(() => SecretBox.fromText(Buffer.alloc(32, 1).toString("base64")).open(sealed, ctx)).toThrow(UnsealError);
    expect(() => box.open(sealed, byokContext("00000000-0000-4000-8000-000000000000"))).toThrow(UnsealError);
    expect(() => box.open("sk-secret", ctx)).toThrow(UnsealError);
    expect(() => box.open(SEALED_PREFIX + "abc", ctx)).toThrow(UnsealError);
    for (let i = SEALED_PREFIX.length; i < sealed.length; i++) {
      if (sealed[i] === ".") continue;
      const flipped = sealed.slice(0, i) + (sealed[i] === "A" ? "B" : "A") + sealed.slice(i + 1);
      // A flip in the last character of a base64url part may only touch its padding bits.
      if (
        Buffer.from(flipped.slice(SEALED_PREFIX.length).replace(/\./g, ""), "base64url").equals(
          Buffer.from(sealed.slice(SEALED_PREFIX.length).replace(/\./g, ""), "base64url"),
        )
      )
        continue;
      expect(() => box.open(flipped, ctx)).toThrow(UnsealError);
    }
  });

  test("keys: 64 hex digits, base64 or base64url of 32 bytes; generated keys are valid", () => {
    const raw = Buffer.alloc(32, 0xfb);
    const sealed = SecretBox.fromText(raw.toString("hex")).seal("x", ctx);
    expect(SecretBox.fromText(raw.toString("base64")).open(sealed, ctx)).toBe("x");
    expect(SecretBox.fromText(raw.toString("base64url")).open(sealed, ctx)).toBe("x");
    expect(SecretBox.fromText(` ${raw.toString("base64")}\n`).open(sealed, ctx)).toBe("x");
    for (const bad of [
      "",
      "00",
      "0".repeat(63),
      Buffer.alloc(16).toString("base64"),
      Buffer.alloc(48, 0xff).toString("base64"),
    ])
      expect(() => SecretBox.fromText(bad)).toThrow();
    const g = SecretBox.generateText();
    expect(Buffer.from(g, "base64").length).toBe(32);
    expect(SecretBox.fromText(g).open(SecretBox.fromText(g).seal("y", ctx), ctx)).toBe("y");
    expect(SecretBox.generateText()).not.toBe(g);
  });
});
