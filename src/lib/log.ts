/** JSON-lines logging to stdout; one object per line, level-filtered. */
type Level = "debug" | "info" | "warn" | "error";
const ORDER: Record<string, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 99 };

let threshold = ORDER[process.env.LOG_LEVEL ?? "info"] ?? 20;

export function setLogLevel(level: string): void {
  threshold = ORDER[level] ?? 20;
}

/** Whether a line of `level` would be written (lets a caller skip building its fields). */
export function logEnabled(level: Level): boolean {
  return ORDER[level]! >= threshold;
}

function write(level: Level, msg: string, fields?: Record<string, unknown>): void {
  if (ORDER[level]! < threshold) return;
  const line = JSON.stringify({ ts: new Date().toISOString(), level, msg, ...fields }, (_k, v) =>
    typeof v === "bigint"
      ? v.toString()
      : v instanceof Error
        ? { name: v.name, message: v.message, stack: v.stack }
        : v,
  );
  process.stdout.write(line + "\n");
}

/**
 * A whole line of plain JSON values, its `ts`, `level` and `msg` first (lineHead): serialized
 * as it is, in one string, for the line every request writes. The caller checked logEnabled.
 */
export function writeJsonLine(line: { ts: string; level: Level; msg: string; [field: string]: unknown }): void {
  process.stdout.write(`${JSON.stringify(line)}\n`);
}

/** The time, for a line's `ts` (writeJsonLine). */
export function lineTime(): string {
  return isoNow();
}

/**
 * A line whose fields are plain JSON values (no bigint, no Error): serialized without the
 * replacer. The caller checked logEnabled.
 */
export function writeLine(level: Level, msg: string, fields: Record<string, unknown>): void {
  // The head is written by hand and the fields object serialized as it is: no copy of it
  // spread into a second object, on every request.
  const rest = JSON.stringify(fields);
  const head = `{"ts":"${isoNow()}","level":"${level}","msg":${JSON.stringify(msg)}`;
  process.stdout.write(rest.length > 2 ? `${head},${rest.slice(1)}\n` : `${head}}\n`);
}

let isoMs = -1;
let isoText = "";

/** The current time as ISO 8601, formatted once per millisecond (many lines share one at load). */
function isoNow(): string {
  const ms = Date.now();
  if (ms !== isoMs) {
    isoMs = ms;
    isoText = new Date(ms).toISOString();
  }
  return isoText;
}

export const log = {
  debug: (msg: string, f?: Record<string, unknown>) => write("debug", msg, f),
  info: (msg: string, f?: Record<string, unknown>) => write("info", msg, f),
  warn: (msg: string, f?: Record<string, unknown>) => write("warn", msg, f),
  error: (msg: string, f?: Record<string, unknown>) => write("error", msg, f),
};

/**
 * A catch handler for a step whose failure must not fail the caller but must not vanish either
 * (a release after a failed call, a usage record, a lease trim): it logs what it swallowed.
 */
export function swallowed(what: string, fields: Record<string, unknown> = {}): (error: unknown) => void {
  return (error) => log.warn(`${what} failed`, { ...fields, error });
}
