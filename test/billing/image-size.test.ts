/**
 * The sizes of inline images and their token counts by provider (src/core/chat/image-size.ts),
 * which bill a stream the client left before its usage (docs/reliability.md 28.16). Each file
 * header is built byte by byte as its format specifies; the counts are the providers' rules.
 */
import { describe, expect, test } from "bun:test";
import { imageTokensOf, inlineImageDims } from "../../src/core/chat/image-size";
import { imageTokens } from "../../src/core/chat/estimate";

const dataUrl = (mime: string, bytes: number[]) => `data:${mime};base64,${Buffer.from(bytes).toString("base64")}`;
const be32 = (n: number) => [(n >>> 24) & 255, (n >>> 16) & 255, (n >>> 8) & 255, n & 255];
const le16 = (n: number) => [n & 255, (n >>> 8) & 255];
const ascii = (s: string) => [...s].map((c) => c.charCodeAt(0));

describe("inline image sizes", () => {
  test("PNG, GIF, JPEG (after an APP segment) and the three WebP kinds", () => {
    const png = [
      0x89,
      0x50,
      0x4e,
      0x47,
      0x0d,
      0x0a,
      0x1a,
      0x0a,
      ...be32(13),
      ...ascii("IHDR"),
      ...be32(1920),
      ...be32(1080),
      8,
      2,
      0,
      0,
      0,
    ];
    expect(inlineImageDims(dataUrl("image/png", png))).toEqual({ width: 1920, height: 1080 });
    const gif = [...ascii("GIF89a"), ...le16(640), ...le16(480), 0, 0, 0];
    expect(inlineImageDims(dataUrl("image/gif", gif))).toEqual({ width: 640, height: 480 });
    const app0 = [0xff, 0xe0, 0, 16, ...ascii("JFIF"), 0, 1, 1, 0, 0, 1, 0, 1, 0, 0];
    const sof0 = [0xff, 0xc0, 0, 17, 8, 0x02, 0x58, 0x03, 0x20, 3, 1, 0x22, 0, 2, 0x11, 1, 3, 0x11, 1];
    expect(inlineImageDims(dataUrl("image/jpeg", [0xff, 0xd8, ...app0, ...sof0]))).toEqual({
      width: 800,
      height: 600,
    });
    const riff = (kind: string, body: number[]) => [
      ...ascii("RIFF"),
      ...be32(0),
      ...ascii("WEBP"),
      ...ascii(kind),
      ...be32(0),
      ...body,
    ];
    // VP8X: 24-bit width−1 and height−1 at bytes 24 and 27.
    const vp8x = riff("VP8X", [0, 0, 0, 0, ...[1023 & 255, 1023 >> 8, 0], ...[767 & 255, 767 >> 8, 0]]);
    expect(inlineImageDims(dataUrl("image/webp", vp8x))).toEqual({ width: 1024, height: 768 });
    // VP8 (lossy): frame tag, start code, then 14-bit width and height at bytes 26 and 28.
    const vp8 = riff("VP8 ", [0, 0, 0, 0x9d, 0x01, 0x2a, ...le16(300), ...le16(200)]);
    expect(inlineImageDims(dataUrl("image/webp", vp8))).toEqual({ width: 300, height: 200 });
    // VP8L (lossless): signature 0x2f, then 14 bits of width−1 and 14 of height−1.
    const bits = (99 & 0x3fff) | ((49 & 0x3fff) << 14);
    const vp8l = riff("VP8L", [
      0x2f,
      bits & 255,
      (bits >>> 8) & 255,
      (bits >>> 16) & 255,
      (bits >>> 24) & 255,
      0,
      0,
      0,
      0,
      0,
    ]);
    expect(inlineImageDims(dataUrl("image/webp", vp8l))).toEqual({ width: 100, height: 50 });
  });

  test("a remote URL, a non-base64 data URL or an unknown format has no size", () => {
    expect(inlineImageDims("https://example.com/cat.png")).toBeNull();
    expect(inlineImageDims("data:image/svg+xml,<svg/>")).toBeNull();
    expect(inlineImageDims(dataUrl("image/bmp", ascii("BM0000000000000000000000000000")))).toBeNull();
    expect(inlineImageDims("data:image/png;base64,!!!not base64!!!")).toBeNull();
  });
});

describe("tokens of an image of known size", () => {
  test("OpenAI tiles: fitted into 2048, short side to 768, 512-px tiles; low detail is the base", () => {
    // 1920×1080 → 1365×768 → 3×2 tiles.
    expect(imageTokensOf("openai", "gpt-4o", false, { width: 1920, height: 1080 })).toBe(85 + 170 * 6);
    expect(imageTokensOf("openai", "gpt-4o-mini", false, { width: 1, height: 1 })).toBe(2833 + 5667);
    expect(imageTokensOf("openai", "gpt-4o-mini", true, { width: 4000, height: 4000 })).toBe(2833);
    // 4096×4096 → 2048 → 768×768: 4 tiles, within the hold's 8.
    expect(imageTokensOf("openai", "gpt-4o", false, { width: 4096, height: 4096 })).toBe(85 + 170 * 4);
  });

  test("Anthropic width × height / 750, Gemini 258 per tile, patch models; never above the hold's figure", () => {
    expect(imageTokensOf("anthropic", "claude-haiku-4-5", false, { width: 600, height: 400 })).toBe(320);
    // 8000×8000 is brought down to 1.15 megapixels (1072×1072): 1,533, under the hold's 1,600.
    expect(imageTokensOf("anthropic", "claude-haiku-4-5", false, { width: 8000, height: 8000 })).toBe(1533);
    expect(imageTokensOf("gemini", "gemini-2.5-flash", false, { width: 300, height: 300 })).toBe(258);
    expect(imageTokensOf("gemini", "gemini-2.5-flash", false, { width: 1000, height: 800 })).toBe(258 * 4);
    expect(imageTokensOf("openai", "gpt-4.1-mini", false, { width: 64, height: 64 })).toBe(Math.ceil(4 * 2.46));
    for (const [p, m] of [
      ["openai", "gpt-4o"],
      ["openai", "o4-mini"],
      ["gemini", "x"],
      ["anthropic", "x"],
    ] as const)
      expect(imageTokensOf(p, m, false, { width: 20000, height: 20000 })).toBeLessThanOrEqual(
        imageTokens(p, m, { low: false }),
      );
  });
});
