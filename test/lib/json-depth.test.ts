/** The nesting-depth scan that guards every JSON body (MAX_JSON_DEPTH). */
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { jsonDepthExceeds } from "../../src/lib/json-depth";

const bytes = (s: string) => new TextEncoder().encode(s);

/** The nesting depth of a parsed value, the slow and obvious way. */
function depthOf(v: unknown): number {
  if (Array.isArray(v)) return 1 + Math.max(0, ...v.map(depthOf));
  if (v && typeof v === "object") return 1 + Math.max(0, ...Object.values(v).map(depthOf));
  return 0;
}

describe("jsonDepthExceeds", () => {
  test("counts objects and arrays, not brackets inside strings or escaped quotes", () => {
    expect(jsonDepthExceeds(bytes('{"a":[{"b":1}]}'), 3)).toBe(false);
    expect(jsonDepthExceeds(bytes('{"a":[{"b":1}]}'), 2)).toBe(true);
    expect(jsonDepthExceeds(bytes('{"a":"[[[[{{{{"}'), 1)).toBe(false);
    expect(jsonDepthExceeds(bytes('{"a":"x\\"[[[[","b":"\\\\"}'), 1)).toBe(false);
    expect(jsonDepthExceeds(bytes('["\\\\",[[1]]]'), 2)).toBe(true);
    expect(jsonDepthExceeds(bytes("[".repeat(100_000) + "]".repeat(100_000)), 64)).toBe(true);
    expect(jsonDepthExceeds(bytes('"unterminated [[['), 0)).toBe(false);
  });

  test("agrees with the parsed value's depth for any JSON", () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 8 }), fc.integer({ min: 0, max: 9 }), (v, max) => {
        expect(jsonDepthExceeds(bytes(JSON.stringify(v)), max)).toBe(depthOf(v) > max);
      }),
      { numRuns: 500 },
    );
  });
});
