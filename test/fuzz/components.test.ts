/**
 * Property-based fuzzing (fast-check) of the parsers that read untrusted text on their own:
 * the SSE decoder and the relay's byte splitter, the PII masker, the model-id parser. Seeded
 * example tests live beside each (test/lib/sse.test.ts, test/lib/pii-*.test.ts,
 * test/catalog/resolve.test.ts); these add arbitrary input and arbitrary chunking.
 * FUZZ_RUNS scales the number of cases (default 300 per property).
 */
import { maskMessages } from "../../src/core/chat/pii-mask";
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { SseDecoder, type SseEvent } from "../../src/lib/sse";
import { SseSplitter } from "../../src/lib/sse-split";
import { findPii, maskPii, PiiMasker, PiiStreamUnmasker, unmask } from "../../src/lib/pii";
import { resolveModel, parsePolicyRef } from "../../src/core/catalog/resolve";
import { getModel } from "../../src/core/catalog/types";
import { GatewayError } from "../../src/core/errors";
import { snapshotOf } from "../catalog/helpers";

const RUNS = Number(process.env.FUZZ_RUNS ?? 300);
const enc = new TextEncoder();

/** Splits bytes at arbitrary cut points. */
function chunked(bytes: Uint8Array, cuts: number[]): Uint8Array[] {
  const points = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
  const out: Uint8Array[] = [];
  let prev = 0;
  for (const p of points) {
    out.push(bytes.subarray(prev, p));
    prev = p;
  }
  out.push(bytes.subarray(prev));
  return out;
}

function decodeAll(chunks: Uint8Array[]): SseEvent[] {
  const d = new SseDecoder();
  const out = chunks.flatMap((c) => d.push(c));
  return [...out, ...d.end()];
}

/** SSE-ish text: field lines, comments, blank lines, every line ending, unicode. */
const sseText = fc
  .array(
    fc.oneof(
      fc
        .tuple(
          fc.constantFrom("data", "event", "id", "retry", "x", ""),
          fc.constantFrom(":", ": ", ""),
          fc.string({ unit: "grapheme", maxLength: 30 }),
        )
        .map(([f, sep, v]) => `${f}${sep}${v.replace(/[\r\n]/g, " ")}`),
      fc.string({ unit: "grapheme", maxLength: 20 }).map((v) => `: ${v.replace(/[\r\n]/g, " ")}`),
      fc.constant(""),
      fc.constant("data: [DONE]"),
    ),
    { maxLength: 30 },
  )
  .chain((lines) =>
    fc
      .array(fc.constantFrom("\n", "\r\n", "\r"), { minLength: lines.length, maxLength: lines.length })
      .map((eols) => lines.map((l, i) => l + eols[i]).join("")),
  );

describe("SSE decoder and splitter", () => {
  test("arbitrary bytes never throw, in any chunking", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 400 }), fc.array(fc.nat(), { maxLength: 12 }), (bytes, cuts) => {
        decodeAll(chunked(bytes, cuts));
        const s = new SseSplitter();
        for (const c of chunked(bytes, cuts)) s.push(c);
        s.rest();
      }),
      { numRuns: RUNS },
    );
  });

  test("the decoder's events do not depend on how the bytes were chunked", () => {
    fc.assert(
      fc.property(sseText, fc.array(fc.nat(), { maxLength: 12 }), (text, cuts) => {
        const bytes = enc.encode(text);
        expect(decodeAll(chunked(bytes, cuts))).toEqual(decodeAll([bytes]));
      }),
      { numRuns: RUNS },
    );
  });

  test("the splitter reproduces the stream byte for byte and its events do not depend on chunking", () => {
    fc.assert(
      fc.property(
        fc.oneof(
          sseText.map((t) => enc.encode(t)),
          fc.uint8Array({ maxLength: 300 }),
        ),
        fc.array(fc.nat(), { maxLength: 12 }),
        (bytes, cuts) => {
          const s = new SseSplitter();
          const events = chunked(bytes, cuts).flatMap((c) => s.push(c).map((e) => Array.from(e)));
          const rest = s.rest();
          const whole = new SseSplitter();
          const once = whole.push(bytes).map((e) => Array.from(e));
          expect(events).toEqual(once);
          const joined = [...events.flat(), ...(rest ? Array.from(rest) : [])];
          expect(joined).toEqual(Array.from(bytes));
        },
      ),
      { numRuns: RUNS },
    );
  });
});

/** Text with PII-looking fragments mixed into arbitrary unicode. */
const piiFragment = fc.oneof(
  fc.constantFrom(
    "010-1234-5678",
    "01012345678",
    "+82 10 9876 5432",
    "02-123-4567",
    "900101-1234567",
    "4111 1111 1111 1111",
    "5500-0000-0000-0004",
    "M12345678",
    "kim@example.com",
    "a.b+c@mail.co.kr",
  ),
  fc.stringMatching(/^[a-z]{1,8}@[a-z]{1,8}\.(com|kr|net)$/),
  fc.stringMatching(/^01[016789]-\d{3,4}-\d{4}$/),
  fc.stringMatching(/^\d{6}-[1-4]\d{6}$/),
);
const textWithPii = fc
  .array(
    fc.oneof(
      fc.string({ unit: "grapheme", maxLength: 12 }),
      piiFragment,
      fc.constantFrom(" ", "은 ", "에게 ", ", ", "(", ")", "\n"),
    ),
    { maxLength: 16 },
  )
  .map((xs) => xs.join(""));
const PLACEHOLDER_SHAPED = /\[(EMAIL|PHONE|RRN|CARD|PASSPORT)_\d+\]/;

describe("PII masker", () => {
  test("never throws; masked text has nothing left to find, and every placeholder stands for a finding", () => {
    fc.assert(
      fc.property(fc.oneof(textWithPii, fc.string({ unit: "binary", maxLength: 200 })), (text) => {
        const { text: masked, mapping } = maskPii(text);
        // (A replaced value may still occur glued inside a longer token, where it is no finding.)
        expect(findPii(masked)).toEqual([]);
        for (const [placeholder, value] of mapping) {
          expect(masked.includes(placeholder)).toBe(true);
          expect(findPii(value).length).toBeGreaterThan(0);
        }
        if (mapping.size === 0) expect(masked).toBe(text);
      }),
      { numRuns: RUNS },
    );
  });

  test("unmask(mask(text)) gives the text back, plain and streamed in arbitrary deltas", () => {
    fc.assert(
      fc.property(
        textWithPii.filter((t) => !PLACEHOLDER_SHAPED.test(t)),
        fc.array(fc.nat(), { maxLength: 10 }),
        (text, cuts) => {
          const masker = new PiiMasker();
          const masked = masker.mask(text);
          expect(unmask(masked, masker.mapping)).toBe(text);
          const stream = new PiiStreamUnmasker(masker.mapping);
          const points = [...new Set(cuts.map((c) => c % (masked.length + 1)))].sort((a, b) => a - b);
          let out = "";
          let prev = 0;
          for (const p of [...points, masked.length]) {
            out += stream.push(masked.slice(prev, p));
            prev = p;
          }
          expect(out + stream.flush()).toBe(text);
        },
      ),
      { numRuns: RUNS },
    );
  });

  // A text that already contains a placeholder-shaped string such as "[EMAIL_1]" must not get
  // a real value back in its place after the round trip: the masker never hands out a
  // placeholder the request itself contains.
  test("a text that already contains a placeholder-shaped string survives the round trip", () => {
    const text = "[EMAIL_1] wrote to kim@example.com";
    const { text: masked, mapping } = maskPii(text);
    expect(masked).toBe("[EMAIL_1] wrote to [EMAIL_2]");
    expect(unmask(masked, mapping)).toBe(text);
  });

  test("across messages too: a later message's literal placeholder is never handed out", () => {
    const messages = [
      { role: "user" as const, content: "mail kim@example.com" },
      { role: "user" as const, content: "what does [EMAIL_1] mean?" },
    ];
    const { messages: masked, mapping } = maskMessages(messages);
    expect(masked[0]!.content).toBe("mail [EMAIL_2]");
    expect(unmask(String(masked[1]!.content), mapping!)).toBe("what does [EMAIL_1] mean?");
  });
});

describe("model-id parser", () => {
  const snap = snapshotOf();
  const ids = snap.models.map((m) => m.id);
  const providers = [...new Set(snap.providers.map((p) => p.id))];
  const modelValue = fc.oneof(
    fc.string({ unit: "grapheme", maxLength: 60 }),
    fc.string({ unit: "binary", maxLength: 40 }),
    fc.constantFrom(...ids),
    fc.tuple(fc.constantFrom(...ids), fc.constantFrom(...providers, "", "nobody", "@")).map(([m, p]) => `${m}@${p}`),
    fc
      .tuple(fc.constantFrom("openai", "anthropic", "google", "x", ""), fc.constantFrom(...ids))
      .map(([v, m]) => `${v}/${m}`),
    fc
      .tuple(fc.constantFrom("orch/", "policy/", "ORCH/", "orch//"), fc.string({ maxLength: 70 }))
      .map(([p, s]) => p + s),
    fc.constantFrom(...ids).map((m) => m.toUpperCase()),
  );

  test("any string: a resolution of a known kind, or a GatewayError 400 with a message; never another exception", () => {
    fc.assert(
      fc.property(modelValue, (id) => {
        try {
          const r = resolveModel(snap, id);
          expect(["leaf", "parent", "policy"]).toContain(r.kind);
          if (r.kind === "leaf") {
            expect(getModel(snap, r.model.id)).toBe(r.model);
            expect(r.offerings.length).toBeGreaterThan(0);
            if (r.pinnedProvider) expect(r.offerings.every((o) => o.providerId === r.pinnedProvider)).toBe(true);
          }
          if (r.kind === "policy") expect(parsePolicyRef(id)).not.toBeNull();
        } catch (e) {
          expect(e).toBeInstanceOf(GatewayError);
          expect((e as GatewayError).status).toBe(400);
          expect((e as GatewayError).message.length).toBeGreaterThan(0);
        }
      }),
      { numRuns: RUNS * 3 },
    );
  });

  test("a resolvable id, its upper-case spelling and its pinned form name the same model", () => {
    const callable = snap.models.filter((m) => m.kind === "leaf" && m.active).map((m) => m.id);
    fc.assert(
      fc.property(fc.constantFrom(...callable), (id) => {
        const r = resolveModel(snap, id);
        if (r.kind !== "leaf") return;
        expect(
          resolveModel(snap, id.toUpperCase()).kind === "leaf" &&
            (resolveModel(snap, id.toUpperCase()) as typeof r).model.id,
        ).toBe(r.model.id);
        for (const o of r.offerings) {
          const pinned = resolveModel(snap, `${id}@${o.providerId}`);
          expect(pinned.kind === "leaf" && pinned.model.id).toBe(r.model.id);
        }
      }),
      { numRuns: Math.min(RUNS, callable.length * 3) },
    );
  });
});
