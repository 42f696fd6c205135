import { describe, expect, test } from "bun:test";
import { findPii, maskPii, PiiMasker, unmask, type PiiKind } from "../../src/lib/pii";
import { isPlausibleRrn, passesLuhn } from "../../src/lib/pii/validate";

/** [kind, value] of every finding. */
function found(text: string): [PiiKind, string][] {
  return findPii(text).map((s) => [s.kind, text.slice(s.start, s.end)]);
}

/** Each value is found, whole, as `kind` when embedded in a sentence. */
function expectFound(kind: PiiKind, values: string[]): void {
  for (const v of values) expect(found(`연락처: ${v} 입니다.`)).toEqual([[kind, v]]);
}

function expectNothing(texts: string[]): void {
  for (const t of texts) expect({ t, found: found(t) }).toEqual({ t, found: [] });
}

describe("e-mail", () => {
  test("addresses are found whole", () => {
    expectFound("EMAIL", [
      "hong.gildong@example.co.kr",
      "a+tag@sub.example.com",
      "user_1@test.io",
      "x-y%z@mail-server.kr",
    ]);
  });
  test("surrounding punctuation is not part of the address", () => {
    expect(found("write to kim@test.kr.")).toEqual([["EMAIL", "kim@test.kr"]]);
    expect(found("<kim@test.kr>, (lee@test.kr)")).toEqual([
      ["EMAIL", "kim@test.kr"],
      ["EMAIL", "lee@test.kr"],
    ]);
    expect(found("메일kim@test.kr로")).toEqual([["EMAIL", "kim@test.kr"]]);
    expect(found("...kim@test.kr")).toEqual([["EMAIL", "kim@test.kr"]]);
  });
  test("things with an @ that are not addresses", () => {
    expectNothing([
      "@handle said hi",
      "user@localhost",
      "npm i react@18.2.0",
      "pkg@1.2.3",
      "a@b.c",
      "a@-b.com",
      "a@b..com",
      "foo@",
      "@",
      "a@b.com@c.com",
    ]);
  });
});

describe("phone numbers", () => {
  test("Korean mobile in every common spelling", () => {
    expectFound("PHONE", [
      "010-1234-5678",
      "01012345678",
      "010 1234 5678",
      "010.1234.5678",
      "011-123-4567",
      "0161234567",
    ]);
  });
  test("Korean landlines and special prefixes", () => {
    expectFound("PHONE", [
      "02-123-4567",
      "02-1234-5678",
      "031-123-4567",
      "064 712 3456",
      "(02) 123-4567",
      "(02)123-4567",
      "070-1234-5678",
      "080-123-4567",
      "0505-123-4567",
    ]);
  });
  test("international numbers with a +", () => {
    expectFound("PHONE", [
      "+82 10-1234-5678",
      "+821012345678",
      "+82-2-123-4567",
      "+1 415 555 0100",
      "+44 20 7946 0958",
      "+1 (415) 555-0100",
      "+82 (0)10 1234 5678",
      "+33 1 23 45 67 89",
    ]);
  });
  test("Korean particles and punctuation do not stop a match", () => {
    expect(found("전화010-1234-5678로 주세요")).toEqual([["PHONE", "010-1234-5678"]]);
    expect(found("(010-1234-5678)")).toEqual([["PHONE", "010-1234-5678"]]);
    expect(found("(01012345678), (02 123-4567")).toEqual([
      ["PHONE", "01012345678"],
      ["PHONE", "02 123-4567"],
    ]);
    expect(found("010-1234-5678, 010-2345-6789")).toEqual([
      ["PHONE", "010-1234-5678"],
      ["PHONE", "010-2345-6789"],
    ]);
  });
  test("a trailing count is not swallowed into an international number", () => {
    expect(found("+1 415 555 0100 2 times")).toEqual([["PHONE", "+1 415 555 0100"]]);
  });
  test("look-alikes are left alone", () => {
    expectNothing([
      "0212345678", // unbroken landline: as likely an account number
      "010-1234-5678-9", // part of a longer hyphenated id
      "v010-1234-5678",
      "ID01012345678",
      "ORD-010-1234-5678",
      "01012345678901",
      "0101234567", // 010 needs 8 more digits
      "1+1234567890",
      "+12345",
      "+0 123 456 789",
      "099-123-4567", // not an area code
      "02-12-4567",
      "02) 123-4567", // a closing parenthesis without its opening one
    ]);
  });
});

describe("resident registration numbers", () => {
  test("hyphenated and bare 13-digit forms with a valid date", () => {
    expectFound("RRN", ["900101-1234567", "9001011234567", "000229-3123456", "851231-2345678", "990101-5123456"]);
  });
  test("implausible dates and 7th digits are rejected", () => {
    expectNothing([
      "901301-1234567", // month 13
      "900230-1234567", // 30 February
      "010229-3123456", // 2001 is no leap year
      "900100-1234567",
      "900101-9234567", // 7th digit 9 (1800s)
      "900101-0234567",
      "991231-3123456", // born in 2099
      "90010112345678", // 14 digits
      "900101123456", // 12 digits
      "900101-1234567-1",
      "900101 1234567", // only the hyphen joins the halves
    ]);
  });
  test("the calendar check", () => {
    expect(isPlausibleRrn("000229", 3, 2025)).toBe(true);
    expect(isPlausibleRrn("000229", 1, 2025)).toBe(false); // 1900 was no leap year
    expect(isPlausibleRrn("250101", 3, 2024)).toBe(false);
    expect(isPlausibleRrn("250101", 3, 2025)).toBe(true);
    expect(isPlausibleRrn("800431", 1, 2025)).toBe(false);
  });
});

describe("payment cards", () => {
  test("Luhn-valid numbers, grouped or not", () => {
    expectFound("CARD", [
      "4111 1111 1111 1111",
      "4111-1111-1111-1111",
      "4111111111111111",
      "5555 5555 5555 4444",
      "3782 822463 10005",
      "378282246310005",
      "6011111111111117",
      "4222222222222", // 13 digits, not an RRN date
      "3530 1113 3330 0000",
    ]);
  });
  test("the longest valid grouping wins and stops before what follows", () => {
    expect(found("card 4111 1111 1111 1111 exp 12/25")).toEqual([["CARD", "4111 1111 1111 1111"]]);
    expect(found("4111 1111 1111 1111 2024년")).toEqual([["CARD", "4111 1111 1111 1111"]]);
  });
  test("Luhn failures, odd groupings and non-card prefixes are left alone", () => {
    expect(passesLuhn("1234567812345670")).toBe(true);
    expectNothing([
      "4111 1111 1111 1112", // Luhn fails
      "4111111111111112",
      "4111 1111-1111 1111", // mixed separators
      "4111 1111 1111", // 12 digits
      "1234567812345670", // Luhn-valid but 1 is no network prefix
      "1700000000000", // a millisecond timestamp
      "0000 0000 0000 0000",
      "41111 1111 1111 1111",
      "x4111111111111111",
    ]);
  });
});

describe("passports", () => {
  test("old and new Korean formats", () => {
    expectFound("PASSPORT", ["M12345678", "S12345678", "M123A4567", "D987Z6543"]);
  });
  test("look-alikes", () => {
    expectNothing(["M123456789", "M1234567", "AM12345678", "m12345678", "X12345678", "M12345678X", "SKU-M12345678"]);
  });
});

describe("numbers that are not PII", () => {
  test("versions, addresses, dates, prices, order numbers", () => {
    expectNothing([
      "version 1.2.3.4 and 10.0.19045.3803",
      "server at 192.168.100.200, 10.0.0.1 and 255.255.255.0",
      "on 2024-01-15T10:30:00Z, or 2024.01.15, or 20240115",
      "₩1,234,567 or $12,345.67 or 1 234 567 890 won",
      "order 2024-0115-3382, ORD-20240115-000123, #123456789",
      "timestamp 1700000000000, uuid 550e8400-e29b-41d4-a716-446655440000",
      "sha 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
      "1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13",
    ]);
  });
});

describe("masking", () => {
  test("every kind in one text", () => {
    const text =
      "Mail hong@example.com, call 010-1234-5678 or +1 415 555 0100, RRN 900101-1234567, card 4111 1111 1111 1111, passport M12345678.";
    const { text: masked, mapping } = maskPii(text);
    expect(masked).toBe(
      "Mail [EMAIL_1], call [PHONE_1] or [PHONE_2], RRN [RRN_1], card [CARD_1], passport [PASSPORT_1].",
    );
    expect([...mapping]).toEqual([
      ["[EMAIL_1]", "hong@example.com"],
      ["[PHONE_1]", "010-1234-5678"],
      ["[PHONE_2]", "+1 415 555 0100"],
      ["[RRN_1]", "900101-1234567"],
      ["[CARD_1]", "4111 1111 1111 1111"],
      ["[PASSPORT_1]", "M12345678"],
    ]);
    expect(unmask(masked, mapping)).toBe(text);
  });

  test("the same value gets the same placeholder, across texts of one masker", () => {
    const m = new PiiMasker();
    expect(m.mask("a@x.com b@x.com a@x.com")).toBe("[EMAIL_1] [EMAIL_2] [EMAIL_1]");
    expect(m.mask("again b@x.com, new c@x.com")).toBe("again [EMAIL_2], new [EMAIL_3]");
    expect(m.mapping.size).toBe(3);
  });

  test("values are kept verbatim: two spellings of one number are two placeholders", () => {
    const { text } = maskPii("010-1234-5678 / 01012345678");
    expect(text).toBe("[PHONE_1] / [PHONE_2]");
  });

  test("text without PII comes back as the same string, with an empty mapping", () => {
    const text = "nothing here, version 1.2.3 on 2024-01-15";
    const r = maskPii(text);
    expect(r.text).toBe(text);
    expect(r.mapping.size).toBe(0);
  });

  test("masked text has nothing left to mask", () => {
    const { text } = maskPii("kim@test.kr 010-1234-5678 4111111111111111 M12345678 900101-1234567");
    expect(found(text)).toEqual([]);
  });

  test("an address whose local part is a phone number stays one e-mail", () => {
    expect(found("01012345678@naver.com")).toEqual([["EMAIL", "01012345678@naver.com"]]);
    expect(found("hong.01012345678@naver.com")).toEqual([["EMAIL", "hong.01012345678@naver.com"]]);
  });
});

describe("cost stays linear on hostile input", () => {
  const cases: [string, string][] = [
    ["one long digit run", "7".repeat(1_000_000)],
    ["digits and hyphens", "12-".repeat(300_000)],
    ["spaced digits", "1 2 3 4 5 6 7 8 9 ".repeat(50_000)],
    ["many @", "@".repeat(1_000_000)],
    ["a long word then @", "a".repeat(1_000_000) + "@x.com"],
    ["word@ repeated", "ab@".repeat(300_000)],
    ["many +", "+1 ".repeat(300_000)],
    ["parentheses", "(1) ".repeat(250_000)],
    ["passport-like letters", "M123 ".repeat(200_000)],
  ];
  for (const [name, text] of cases) {
    test(name, () => {
      const t0 = performance.now();
      findPii(text);
      // A quadratic scan of 1 MB would take minutes; linear takes milliseconds.
      expect(performance.now() - t0).toBeLessThan(2000);
    });
  }
});
