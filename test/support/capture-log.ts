/** What the gateway's logger writes to stdout while a test body runs, every level on. */
import { setLogLevel } from "../../src/lib/log";

export async function captureLog(fn: () => Promise<void>): Promise<string> {
  const out: string[] = [];
  const write = process.stdout.write.bind(process.stdout);
  process.stdout.write = ((chunk: string | Uint8Array) => {
    out.push(typeof chunk === "string" ? chunk : new TextDecoder().decode(chunk));
    return true;
  }) as typeof process.stdout.write;
  setLogLevel("debug");
  try {
    await fn();
  } finally {
    setLogLevel(process.env.LOG_LEVEL ?? "silent");
    process.stdout.write = write;
  }
  return out.join("");
}
