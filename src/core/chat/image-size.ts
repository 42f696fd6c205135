/**
 * The best estimate of an image part's prompt tokens, for billing a stream the client left
 * before the provider's usage came (docs/reliability.md 28.16). The hold assumes the largest
 * image a provider accepts (estimate.ts `imageTokens`), which is right for an upper bound and
 * wrong for a bill: a 1×1 PNG was held, and then charged, at 48,169 tokens on GPT-4o mini. When
 * the image travels inline (a `data:` URL), its width and height are in the first bytes of the
 * file (PNG, GIF, WebP, JPEG), and the provider's documented rule gives its count. An image
 * behind a remote URL, or one whose header cannot be read, keeps the hold's figure: the gateway
 * cannot know it, and billing less than the provider may count would reopen the dropped-stream
 * dodge (docs/reliability.md §2).
 */
import { imageTokens } from "./estimate";
import type { ChatMessage } from "../model/types";

export interface ImageDims {
  width: number;
  height: number;
}

/** Base64 characters decoded at most to find a header (JPEG's size marker may follow EXIF data). */
const HEAD_CHARS = 262_144;

/** Width and height of an inline image (`data:image/…;base64,…`), or null when unknown. */
export function inlineImageDims(url: string): ImageDims | null {
  if (!url.startsWith("data:")) return null;
  const comma = url.indexOf(",");
  if (comma < 0 || !url.slice(0, comma).endsWith(";base64")) return null;
  let head = url.slice(comma + 1, comma + 1 + HEAD_CHARS);
  head = head.slice(0, head.length - (head.length % 4));
  let bytes: Uint8Array;
  try {
    bytes = Uint8Array.from(atob(head), (ch) => ch.charCodeAt(0));
  } catch {
    return null;
  }
  const d = pngDims(bytes) ?? gifDims(bytes) ?? webpDims(bytes) ?? jpegDims(bytes);
  return d && d.width > 0 && d.height > 0 ? d : null;
}

const be16 = (b: Uint8Array, i: number) => (b[i]! << 8) | b[i + 1]!;
const le16 = (b: Uint8Array, i: number) => b[i]! | (b[i + 1]! << 8);
const be32 = (b: Uint8Array, i: number) => ((b[i]! << 24) >>> 0) + (b[i + 1]! << 16) + (b[i + 2]! << 8) + b[i + 3]!;
const ascii = (b: Uint8Array, i: number, n: number) => String.fromCharCode(...b.subarray(i, i + n));

function pngDims(b: Uint8Array): ImageDims | null {
  if (b.length < 24 || be32(b, 0) !== 0x89504e47 || ascii(b, 12, 4) !== "IHDR") return null;
  return { width: be32(b, 16), height: be32(b, 20) };
}

function gifDims(b: Uint8Array): ImageDims | null {
  if (b.length < 10 || ascii(b, 0, 4) !== "GIF8") return null;
  return { width: le16(b, 6), height: le16(b, 8) };
}

function webpDims(b: Uint8Array): ImageDims | null {
  if (b.length < 30 || ascii(b, 0, 4) !== "RIFF" || ascii(b, 8, 4) !== "WEBP") return null;
  const kind = ascii(b, 12, 4);
  if (kind === "VP8X")
    return {
      width: 1 + (b[24]! | (b[25]! << 8) | (b[26]! << 16)),
      height: 1 + (b[27]! | (b[28]! << 8) | (b[29]! << 16)),
    };
  if (kind === "VP8 ") return { width: le16(b, 26) & 0x3fff, height: le16(b, 28) & 0x3fff };
  if (kind === "VP8L") {
    const bits = b[21]! | (b[22]! << 8) | (b[23]! << 16) | (b[24]! << 24);
    return { width: (bits & 0x3fff) + 1, height: ((bits >>> 14) & 0x3fff) + 1 };
  }
  return null;
}

function jpegDims(b: Uint8Array): ImageDims | null {
  if (b.length < 4 || b[0] !== 0xff || b[1] !== 0xd8) return null;
  let i = 2;
  while (i + 9 < b.length) {
    if (b[i] !== 0xff) return null;
    const marker = b[i + 1]!;
    if (marker === 0xff) {
      i++;
      continue;
    }
    // Start-of-frame markers (not DHT C4, JPG C8, DAC CC) carry height then width.
    if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc)
      return { width: be16(b, i + 7), height: be16(b, i + 5) };
    i += 2 + be16(b, i + 2);
  }
  return null;
}

/**
 * Tokens one image of `d` counts for the provider, by its documented rule (the same families
 * as `imageTokens`, whose figure is the most this can return):
 * - OpenAI tile models: fitted into 2048×2048, the short side brought down to 768, then base +
 *   per-tile × 512-px tiles (GPT-4o 85 + 170, GPT-4o mini 2,833 + 5,667); `low` is the base.
 * - Other OpenAI-compatible models: 32-px patches, at most 1,536, times 2.46.
 * - Anthropic: width × height / 750 after fitting into 1568 px and 1.15 megapixels.
 * - Gemini: 258 up to 384×384, else 258 per 768-px tile.
 */
export function imageTokensOf(protocol: string, upstreamModel: string, low: boolean, d: ImageDims): number {
  const most = imageTokens(protocol, upstreamModel, { low });
  let n: number;
  if (protocol === "anthropic") {
    const s = Math.min(1, 1568 / Math.max(d.width, d.height), Math.sqrt(1_150_000 / (d.width * d.height)));
    n = Math.ceil((Math.round(d.width * s) * Math.round(d.height * s)) / 750);
  } else if (protocol === "gemini") {
    n = d.width <= 384 && d.height <= 384 ? 258 : 258 * Math.ceil(d.width / 768) * Math.ceil(d.height / 768);
  } else if (/^(gpt-4o|chatgpt-4o|gpt-4-turbo|gpt-4\.1(?!-mini|-nano))/.test(upstreamModel)) {
    const mini = /^gpt-4o-mini/.test(upstreamModel);
    const [base, tile] = mini ? [2833, 5667] : [85, 170];
    if (low) return base;
    let s = Math.min(1, 2048 / Math.max(d.width, d.height));
    s *= Math.min(1, 768 / Math.min(d.width * s, d.height * s));
    n = base + tile * Math.ceil((d.width * s) / 512) * Math.ceil((d.height * s) / 512);
  } else {
    const patches = Math.ceil(d.width / 32) * Math.ceil(d.height / 32);
    n = Math.ceil(Math.min(1536, patches) * 2.46);
  }
  return Math.max(1, Math.min(most, n));
}

/**
 * How many tokens the hold's image figures exceed the best estimate by, over every non-text
 * part of `messages` (the parts the hold counted as images): zero when no size can be read.
 */
export function imageOvercount(messages: readonly ChatMessage[], protocol: string, upstreamModel: string): number {
  let over = 0;
  for (const m of messages) {
    if (!Array.isArray(m.content)) continue;
    for (const p of m.content) {
      if (p.type !== "image_url") continue;
      const low = p.image_url?.detail === "low";
      const d = typeof p.image_url?.url === "string" ? inlineImageDims(p.image_url.url) : null;
      if (d) over += imageTokens(protocol, upstreamModel, { low }) - imageTokensOf(protocol, upstreamModel, low, d);
    }
  }
  return over;
}
