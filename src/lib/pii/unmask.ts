/**
 * Restoring placeholders in the model's answer, whole or streamed.
 *
 * Restored values never contain `"` or `\` (see the detectors), so restoring inside JSON text,
 * such as tool-call arguments, keeps it valid JSON without re-escaping.
 */
/** Any `[KIND_n]`; only those in the mapping are replaced, anything else stays as written. */
const PLACEHOLDER = /\[[A-Z]{1,16}_\d{1,9}\]/g;

/** `text` with every placeholder of `mapping` replaced by its original value. */
export function unmask(text: string, mapping: ReadonlyMap<string, string>): string {
  if (mapping.size === 0 || text.indexOf("[") < 0) return text;
  return text.replace(PLACEHOLDER, (p) => mapping.get(p) ?? p);
}

/**
 * Restores a streamed answer delta by delta. A placeholder may arrive split anywhere
 * ("[PH" + "ONE_1]"), so the tail of what was received is held back while it could still
 * become one of the mapping's placeholders, and not a character longer: "[link" or a lone
 * "[" followed by a space is emitted at once. Use one instance per text channel (the content,
 * each tool call's arguments).
 */
export class PiiStreamUnmasker {
  private pending = "";
  /** Every proper prefix of every placeholder ("[", "[E", … "[EMAIL_1"). */
  private readonly prefixes = new Set<string>();
  private readonly longest: number;

  constructor(private readonly mapping: ReadonlyMap<string, string>) {
    let longest = 0;
    for (const p of mapping.keys()) {
      longest = Math.max(longest, p.length);
      for (let i = 1; i < p.length; i++) this.prefixes.add(p.slice(0, i));
    }
    this.longest = longest;
  }

  /** What can be emitted now, restored. */
  push(delta: string): string {
    if (delta.length === 0) return "";
    const buf = this.pending.length ? this.pending + delta : delta;
    const cut = this.holdFrom(buf);
    if (cut === buf.length) {
      this.pending = "";
      return unmask(buf, this.mapping);
    }
    this.pending = buf.slice(cut);
    return unmask(buf.slice(0, cut), this.mapping);
  }

  /** The held-back tail at the end of the stream: it never completed a placeholder, so it is emitted as is. */
  flush(): string {
    const rest = this.pending;
    this.pending = "";
    return rest;
  }

  /** Start of a tail that is a proper prefix of a placeholder, else `buf.length`. */
  private holdFrom(buf: string): number {
    const from = Math.max(0, buf.length - this.longest + 1);
    for (let i = buf.length - 1; i >= from; i--) {
      if (buf.charCodeAt(i) === 91 /* [ */) return this.prefixes.has(buf.slice(i)) ? i : buf.length;
    }
    return buf.length;
  }
}
