/**
 * Replacing findings with placeholders. One {@link PiiMasker} lives for one request, so the
 * same value gets the same placeholder in every message and part of it (the model can still
 * tell that two mentions are the same person), and the mapping can restore the answer.
 */
import { findPii, type PiiKind } from "./detect";

/**
 * Placeholder → original value. Values are kept verbatim ("010-1234-5678" and "01012345678"
 * get different placeholders) so that restoring gives back exactly what the client wrote.
 */
export type PiiMapping = Map<string, string>;

const PLACEHOLDER_SHAPE = /\[(?:EMAIL|PHONE|RRN|CARD|PASSPORT)_\d+\]/g;

export class PiiMasker {
  // Made at the first finding: most requests hold none, and every request gets a masker.
  private found?: { mapping: PiiMapping; byValue: Map<string, string>; counts: Record<PiiKind, number> };
  /** Placeholder-shaped strings the request itself contains: never handed out, so restoring
   * the answer cannot turn the client's own "[EMAIL_1]" into someone's address. */
  private reserved?: Set<string>;

  /** Placeholder → original; complete once every text of the request went through {@link mask}. */
  get mapping(): PiiMapping {
    return this.findings().mapping;
  }

  private findings() {
    return (this.found ??= {
      mapping: new Map(),
      byValue: new Map(),
      counts: { EMAIL: 0, PHONE: 0, RRN: 0, CARD: 0, PASSPORT: 0 },
    });
  }

  /** Notes the placeholder-shaped strings of a text (call for every text before masking any). */
  reserve(text: string): void {
    if (!text.includes("_")) return;
    for (const m of text.matchAll(PLACEHOLDER_SHAPE)) (this.reserved ??= new Set()).add(m[0]);
  }

  /** `text` with every finding replaced; the same string object when nothing was found. */
  mask(text: string): string {
    this.reserve(text);
    let out = this.maskOnce(text);
    // Replacing a finding can expose another it was glued to ("kim@x.net+82 10 …": the "+"
    // follows a word character until the address is a placeholder), so mask until nothing
    // is left to find (found by test/fuzz/components.test.ts).
    for (let prev = text; out !== prev; ) {
      prev = out;
      out = this.maskOnce(out);
    }
    return out;
  }

  private maskOnce(text: string): string {
    const spans = findPii(text);
    if (spans.length === 0) return text;
    let out = "";
    let last = 0;
    for (const s of spans) {
      out += text.slice(last, s.start) + this.placeholderFor(s.kind, text.slice(s.start, s.end));
      last = s.end;
    }
    return out + text.slice(last);
  }

  private placeholderFor(kind: PiiKind, value: string): string {
    const f = this.findings();
    let p = f.byValue.get(value);
    if (p === undefined) {
      do p = `[${kind}_${++f.counts[kind]}]`;
      while (this.reserved?.has(p));
      f.byValue.set(value, p);
      f.mapping.set(p, value);
    }
    return p;
  }
}

/** Masks one text on its own: a fresh mapping, empty when nothing was found. */
export function maskPii(text: string): { text: string; mapping: PiiMapping } {
  const masker = new PiiMasker();
  return { text: masker.mask(text), mapping: masker.mapping };
}
