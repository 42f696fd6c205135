import { describe, expect, test } from "bun:test";
import { maskPii, PiiStreamUnmasker, unmask } from "../../src/lib/pii";

/** A small deterministic PRNG so a failing seed can be replayed. */
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const PII = [
  "hong.gildong@example.co.kr",
  "kim@test.kr",
  "a+b@mail.example.com",
  "010-1234-5678",
  "01098765432",
  "010 2222 3333",
  "02-123-4567",
  "(031) 765-4321",
  "+82 10-1234-5678",
  "+1 415 555 0100",
  "+44 20 7946 0958",
  "900101-1234567",
  "0002293123456",
  "4111 1111 1111 1111",
  "5555-5555-5555-4444",
  "378282246310005",
  "M12345678",
  "M123A4567",
];
/** Text that must come through untouched, including brackets that look like the start of a placeholder. */
const NOISE = [
  "안녕하세요",
  "hello",
  "world.",
  "v1.2.3.4",
  "2024-01-15",
  "₩1,234,567",
  "192.168.0.1",
  "[link](https://x.kr)",
  "[",
  "[E",
  "[EMAIL_",
  "[PHONE_9",
  "[CARD",
  "[x]",
  "a[b",
  "😀",
  "\n",
  "로",
  "(",
  ")",
  "[RRN_",
  "[[",
];

function randomText(r: () => number): string {
  const n = 1 + Math.floor(r() * 14);
  const pieces: string[] = [];
  for (let i = 0; i < n; i++) {
    const pool = r() < 0.4 ? PII : NOISE;
    pieces.push(pool[Math.floor(r() * pool.length)]!);
  }
  // Joined with nothing too, so placeholders end up right after "[" or another placeholder.
  return pieces.join([" ", ", ", ""][Math.floor(r() * 3)]);
}

/** Streams `chunks` through an unmasker, checking after each push that only a placeholder prefix is held back. */
function stream(mapping: Map<string, string>, chunks: string[]): string {
  const keys = [...mapping.keys()];
  const u = new PiiStreamUnmasker(mapping);
  let out = "";
  let fed = "";
  for (const c of chunks) {
    out += u.push(c);
    fed += c;
    const whole = unmask(fed, mapping);
    expect(whole.startsWith(out)).toBe(true);
    const held = whole.slice(out.length);
    if (held) expect(keys.some((k) => k.length > held.length && k.startsWith(held))).toBe(true);
  }
  return out + u.flush();
}

describe("unmask", () => {
  test("restores known placeholders and leaves everything else", () => {
    const mapping = new Map([
      ["[EMAIL_1]", "kim@test.kr"],
      ["[PHONE_1]", "010-1234-5678"],
    ]);
    expect(unmask("mail [EMAIL_1] or call [PHONE_1], not [PHONE_2] or [EMAIL_1", mapping)).toBe(
      "mail kim@test.kr or call 010-1234-5678, not [PHONE_2] or [EMAIL_1",
    );
    expect(unmask("[EMAIL_1][EMAIL_1]", mapping)).toBe("kim@test.krkim@test.kr");
    expect(unmask("no brackets", mapping)).toBe("no brackets");
    expect(unmask("[EMAIL_1]", new Map())).toBe("[EMAIL_1]");
  });

  test("restoring inside JSON keeps it valid", () => {
    const { text, mapping } = maskPii(
      JSON.stringify({ to: "kim@test.kr", phone: "+1 415 555 0100", note: 'say "hi"' }),
    );
    expect(JSON.parse(unmask(text, mapping))).toEqual({
      to: "kim@test.kr",
      phone: "+1 415 555 0100",
      note: 'say "hi"',
    });
  });

  test("round trip on random texts", () => {
    const r = rng(7);
    for (let i = 0; i < 2000; i++) {
      const text = randomText(r);
      const { text: masked, mapping } = maskPii(text);
      expect(unmask(masked, mapping)).toBe(text);
    }
  });
});

describe("PiiStreamUnmasker", () => {
  const mapping = new Map([
    ["[EMAIL_1]", "kim@test.kr"],
    ["[PHONE_12]", "010-1234-5678"],
  ]);

  test("holds back a split placeholder and nothing more", () => {
    const u = new PiiStreamUnmasker(mapping);
    expect(u.push("mail [EM")).toBe("mail ");
    expect(u.push("AIL_")).toBe("");
    expect(u.push("1] now")).toBe("kim@test.kr now");
    expect(u.push("[PHONE_1")).toBe(""); // could still become [PHONE_12]
    expect(u.push("]")).toBe("[PHONE_1]"); // it did not: emitted as written
    expect(u.push("[link] and [x")).toBe("[link] and [x");
    expect(u.push(" a [")).toBe(" a ");
    expect(u.flush()).toBe("[");
    expect(u.flush()).toBe("");
  });

  test("a tail that cannot become a placeholder is emitted at once", () => {
    const u = new PiiStreamUnmasker(mapping);
    expect(u.push("[EMAIL_2")).toBe("[EMAIL_2");
    expect(u.push("[PHONE_123")).toBe("[PHONE_123");
    expect(u.push("[email_1")).toBe("[email_1");
  });

  test("with an empty mapping everything passes straight through", () => {
    const u = new PiiStreamUnmasker(new Map());
    expect(u.push("[EMAIL_1")).toBe("[EMAIL_1");
    expect(u.flush()).toBe("");
  });

  test("fuzz: every two-way split of random masked texts restores the original", () => {
    const r = rng(42);
    for (let i = 0; i < 300; i++) {
      const text = randomText(r);
      const { text: masked, mapping } = maskPii(text);
      for (let cut = 0; cut <= masked.length; cut++) {
        expect(stream(mapping, [masked.slice(0, cut), masked.slice(cut)])).toBe(text);
      }
    }
  });

  test("fuzz: random multi-way splits and one character at a time", () => {
    const r = rng(1234);
    for (let i = 0; i < 1000; i++) {
      const text = randomText(r);
      const { text: masked, mapping } = maskPii(text);
      const chunks: string[] = [];
      for (let at = 0; at < masked.length; ) {
        const len = Math.floor(r() * 12); // empty chunks included
        chunks.push(masked.slice(at, at + len));
        at += len;
      }
      expect(stream(mapping, chunks)).toBe(text);
      expect(stream(mapping, [...masked])).toBe(text);
    }
  });
});
