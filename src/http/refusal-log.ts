/**
 * Refusals folded in the request log: a rate-limited client can send thousands of calls a
 * second, each answered 429 at almost no cost to the gateway, and one JSON line per call would
 * let it write hundreds of MB of logs. Per caller (key, else account, else anonymous), route
 * and error code, the first refusal of each second is written as its ordinary request line;
 * the others of that second are only counted, and one `"msg":"requests refused"` line with
 * their number (`count`) follows when the second is over. Every refusal is in the log, as a
 * line of its own or in a count; a caller is never named more than twice a second.
 */
import { logEnabled, writeLine } from "../lib/log";

/** The error codes of the gateway's own limits, whose floods are folded. */
const FOLDED = new Set(["rate_limited", "concurrency_limit_exceeded", "limiter_unavailable"]);
const WINDOW_MS = 1000;

interface Window {
  started: number;
  /** Refusals since `started` that were counted, not written. */
  folded: number;
  fields: Record<string, unknown>;
}

export interface Refusal {
  keyId?: string;
  accountId?: string;
  method: string;
  route: string;
  status: number;
  error?: string;
}

/** One per application (src/http/app.ts): its windows, and a timer while any is open. */
export class RefusalFolder {
  private windows = new Map<string, Window>();
  private timer: ReturnType<typeof setInterval> | null = null;

  /** Whether a request ending as `r` writes its own line (false: it was counted in its window). */
  line(r: Refusal, now = Date.now()): boolean {
    if (!r.error || !FOLDED.has(r.error)) return true;
    const key = `${r.keyId ?? r.accountId ?? "-"}|${r.method} ${r.route}|${r.error}`;
    const w = this.windows.get(key);
    if (w && now - w.started < WINDOW_MS) {
      w.folded++;
      return false;
    }
    if (w) flushOne(w);
    this.windows.set(key, {
      started: now,
      folded: 0,
      fields: {
        method: r.method,
        route: r.route,
        status: r.status,
        key_id: r.keyId,
        account_id: r.accountId,
        error: r.error,
      },
    });
    if (!this.timer) {
      this.timer = setInterval(() => this.flush(), WINDOW_MS);
      this.timer.unref?.();
    }
    return true;
  }

  /** Writes the counts of every window that is over (all of them with `all`, at shutdown). */
  flush(all = false, now = Date.now()): void {
    for (const [key, w] of this.windows)
      if (all || now - w.started >= WINDOW_MS) {
        flushOne(w);
        this.windows.delete(key);
      }
    if (!this.windows.size && this.timer) {
      clearInterval(this.timer);
      this.timer = null;
    }
  }
}

function flushOne(w: Window): void {
  if (w.folded > 0 && logEnabled("info"))
    writeLine("info", "requests refused", { ...w.fields, count: w.folded, window_ms: WINDOW_MS });
  w.folded = 0;
}
