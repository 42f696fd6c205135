/**
 * The clean shutdown of one gateway process on SIGTERM or SIGINT (docs/reliability.md,
 * "Graceful shutdown"; docs/decisions.md #53). Within `SHUTDOWN_DRAIN_MS` of the signal:
 *
 * 1. Stop taking work: the listener closes, and a request arriving on a connection kept
 *    alive is answered 503 `service_unavailable` with `Connection: close` (src/http/app.ts).
 * 2. Let open calls and streams finish, for the drain time less the end window (a fifth of
 *    the limit, at most 5 s); a stream whose client left too, read for its usage and billed.
 * 3. End the rest: every open stream is cut by the core and ends with its dialect's error
 *    event (code `service_unavailable`; Anthropic's `overloaded_error`), billed for the part
 *    delivered or released when nothing was; every other call is stopped with 503 and its
 *    hold released (CallAdmission.stopAll). Each writes its request log line as usual.
 * 4. Close what remains, wait for the settles still running behind answers, give back the
 *    credit leases, stop the video pollers, close the database, exit: 0 when every call was
 *    settled or released, 1 when the limit forced connections closed first.
 *
 * So no hold of this process is left for the sweeper: no account stays held for HOLD_TTL_SECONDS.
 */
import type { Server } from "bun";
import type { OpenStreams } from "../core/chat/ports";
import { shuttingDown } from "../core/calls/admission";
import type { Gateway } from "../gateway";
import { log } from "../lib/log";

interface Cuttable {
  cut(): void;
}

/**
 * Whether this process is stopping, and the streams open in it (the chat core registers
 * each stream while it is open, so the shutdown can end them with their error event).
 */
export class Draining implements OpenStreams {
  /** Set at the signal: new requests are refused. */
  active = false;
  private open = new Set<Cuttable>();
  private cutting = false;

  add(stream: Cuttable): () => void {
    // A stream that opens after the cut (its request came in before the signal) ends at once.
    if (this.cutting) queueMicrotask(() => stream.cut());
    this.open.add(stream);
    return () => this.open.delete(stream);
  }

  /** Streams open now. */
  get streams(): number {
    return this.open.size;
  }

  /** Ends every open stream (and any that opens later) with its error event. */
  cutAll(): number {
    this.cutting = true;
    const n = this.open.size;
    for (const s of [...this.open]) s.cut();
    return n;
  }
}

/** The longest the end window (cut calls settling, the database closing) is given. */
const END_WINDOW_MAX_MS = 5000;

export function endWindowMs(drainMs: number): number {
  return Math.min(END_WINDOW_MAX_MS, Math.floor(drainMs / 5));
}

/** What the end window keeps for closing the pollers, the leases and the database. */
const closeMs = (window: number) => Math.min(500, window / 4);

/** Resolves true when `cond()` holds, false after `ms` (checked every 10 ms). */
async function until(cond: () => boolean, ms: number): Promise<boolean> {
  const end = performance.now() + ms;
  while (!cond()) {
    if (performance.now() >= end) return false;
    await Bun.sleep(10);
  }
  return true;
}

/** Runs the shutdown; resolves with the process's exit code. */
export async function shutdown(server: Server<unknown>, gw: Gateway, drainMs: number, signal: string): Promise<number> {
  const t0 = performance.now();
  const left = () => drainMs - (performance.now() - t0);
  const window = endWindowMs(drainMs);
  gw.draining.active = true;
  log.info("shutting down", {
    signal,
    pending: server.pendingRequests,
    streams: gw.draining.streams,
    drain_ms: drainMs,
  });
  let closed = false;
  // The listener closes now; the promise resolves once the requests in flight are done.
  const stopped = server.stop(false).then(() => (closed = true));
  // A stream whose client left is no pending request, yet it is still read for its usage and
  // billed when that read ends: it keeps the process until it is billed, or is cut with the rest.
  const idle = () => (closed || server.pendingRequests === 0) && gw.draining.streams === 0;
  let forced = false;
  if (!(await until(idle, left() - window))) {
    const streams = gw.draining.cutAll();
    gw.deps.calls.admission.stopAll(shuttingDown());
    log.warn("shutdown drain time is up; ending the calls still open", {
      pending: server.pendingRequests,
      streams,
    });
    // The ended calls bill and write their last event; the window for that, less a little to close.
    if (!(await until(idle, Math.max(0, left() - closeMs(window))))) {
      forced = true;
      log.error("shutdown limit reached; closing the connections still open", { pending: server.pendingRequests });
    }
  }
  // The last bytes of the ended calls leave before their connections close; only what is
  // still open past that is closed by force.
  if (!(await until(() => closed, Math.max(0, left() - closeMs(window))))) {
    log.warn("closing the connections still open", { pending: server.pendingRequests });
    await Promise.race([server.stop(true), stopped]);
  }
  // The settles still behind their answers, the leases, the pollers, the database.
  await gw.stop(Math.max(100, left()));
  log.info("stopped", { ms: Math.round(performance.now() - t0), forced });
  return forced ? 1 : 0;
}

/** Runs `shutdown` on the first SIGTERM or SIGINT, then exits with its code. */
export function onStopSignals(server: Server<unknown>, gw: Gateway, drainMs: number): void {
  let started = false;
  const go = (signal: string) => {
    if (started) return;
    started = true;
    shutdown(server, gw, drainMs, signal)
      .catch((e) => {
        log.error("shutdown failed", { error: e });
        return 1;
      })
      .then((code) => process.exit(code));
  };
  process.on("SIGTERM", () => go("SIGTERM"));
  process.on("SIGINT", () => go("SIGINT"));
}
