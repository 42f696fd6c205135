/** A chat call's phases as trace spans (the CallTrace port): the hold, the settle. */
import { GatewayError } from "../errors";
import type { CallTrace } from "../model/trace";
import type { PendingHold } from "./hold";

/** The error's code for a trace (a GatewayError's own code, else its class name). */
export function errorName(e: unknown): string {
  return e instanceof GatewayError ? e.errorCode : e instanceof Error ? e.name : "error";
}

/** Runs `work` as the trace's `name` phase. */
export function traced<T>(trace: CallTrace | undefined, name: "hold" | "settle", work: Promise<T>): Promise<T> {
  // Untraced (the usual case), the work's own promise: no async call only to pass it on.
  return trace?.traced ? inPhase(trace, name, work) : work;
}

async function inPhase<T>(trace: CallTrace, name: "hold" | "settle", work: Promise<T>): Promise<T> {
  const end = trace.phase(name);
  try {
    const v = await work;
    end();
    return v;
  } catch (e) {
    end(errorName(e));
    throw e;
  }
}

/** The hold phase of startHold: a hold on its way alongside the call ends when it lands. */
export function tracedHold(
  trace: CallTrace | undefined,
  started: Promise<{ pending: PendingHold | null }>,
): Promise<{ pending: PendingHold | null }> {
  return trace?.traced ? holdInPhase(trace, started) : started;
}

async function holdInPhase(
  trace: CallTrace,
  started: Promise<{ pending: PendingHold | null }>,
): Promise<{ pending: PendingHold | null }> {
  const end = trace.phase("hold");
  let r;
  try {
    r = await started;
  } catch (e) {
    end(errorName(e));
    throw e;
  }
  if (!r.pending) end();
  else void r.pending.then((hold) => end(hold.kind === "placed" ? undefined : errorName(hold.error)));
  return r;
}
