/**
 * Authenticated encryption of secrets kept in the database (BYOK provider credentials):
 * AES-256-GCM under a key held outside the database. A sealed value is
 * `gwenc:v1:<iv>.<ciphertext>.<tag>` (base64url parts): the version says how to open it, so a
 * later format can live next to this one. Each value is bound to a context (the row it belongs
 * to) as additional data, so a sealed value copied into another row does not open there.
 */
import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";

export const SEALED_PREFIX = "gwenc:v1:";
const KEY_BYTES = 32;
const IV_BYTES = 12;
const TAG_BYTES = 16;

/** `BYOK_ENCRYPTION_KEY`'s accepted forms: 64 hex digits, or 32 bytes in base64 / base64url. */
export const KEY_TEXT_PATTERN = "^([0-9a-fA-F]{64}|[A-Za-z0-9+/_-]{43}=?)$";

/** A sealed value this key cannot open: wrong key, another row's value, or damaged. */
export class UnsealError extends Error {}

/** The context a BYOK credential is sealed under: the API key it belongs to. */
export const byokContext = (apiKeyId: string) => `api_keys.byok_secret:${apiKeyId.toLowerCase()}`;

export class SecretBox {
  private constructor(private readonly key: Buffer) {}

  /** A key from its text form (see KEY_TEXT_PATTERN); throws on anything that is not 32 bytes. */
  static fromText(text: string): SecretBox {
    const t = text.trim();
    if (!new RegExp(KEY_TEXT_PATTERN).test(t)) throw new Error("expected 32 bytes as 64 hex digits or base64");
    const key = /^[0-9a-fA-F]{64}$/.test(t)
      ? Buffer.from(t, "hex")
      : Buffer.from(t.replace(/-/g, "+").replace(/_/g, "/"), "base64");
    if (key.length !== KEY_BYTES) throw new Error("expected 32 bytes as 64 hex digits or base64");
    return new SecretBox(key);
  }

  /** A fresh random key in its text form (base64). */
  static generateText(): string {
    return randomBytes(KEY_BYTES).toString("base64");
  }

  static isSealed(value: string): boolean {
    return value.startsWith(SEALED_PREFIX);
  }

  seal(plain: string, context: string): string {
    const iv = randomBytes(IV_BYTES);
    const c = createCipheriv("aes-256-gcm", this.key, iv);
    c.setAAD(Buffer.from(context, "utf8"));
    const body = Buffer.concat([c.update(plain, "utf8"), c.final()]);
    return SEALED_PREFIX + [iv, body, c.getAuthTag()].map((b) => b.toString("base64url")).join(".");
  }

  open(sealed: string, context: string): string {
    if (!SecretBox.isSealed(sealed)) throw new UnsealError("not a sealed value");
    const parts = sealed.slice(SEALED_PREFIX.length).split(".");
    if (parts.length !== 3) throw new UnsealError("malformed sealed value");
    const [iv, body, tag] = parts.map((p) => Buffer.from(p, "base64url"));
    if (iv!.length !== IV_BYTES || tag!.length !== TAG_BYTES) throw new UnsealError("malformed sealed value");
    try {
      const d = createDecipheriv("aes-256-gcm", this.key, iv!);
      d.setAAD(Buffer.from(context, "utf8"));
      d.setAuthTag(tag!);
      return Buffer.concat([d.update(body!), d.final()]).toString("utf8");
    } catch {
      throw new UnsealError("the key does not open this value");
    }
  }
}
