/**
 * Boot-time wait for PostgreSQL. In a compose file or an orchestrator the database often comes
 * up after the gateway, so an unreachable, refusing or not-yet-configured server is retried
 * with backoff for DB_CONNECT_TIMEOUT_SECONDS, each failure said in one sentence on stderr
 * (no stack: the operator needs the reason, not our call chain).
 */
import postgres from "postgres";

/** Where a URL points, without its password (for messages). */
export function describeTarget(url: string): string {
  try {
    const u = new URL(url);
    const host = u.hostname || u.searchParams.get("host") || "localhost";
    return `${host}:${u.port || "5432"}${u.pathname && u.pathname !== "/" ? u.pathname : ""}`;
  } catch {
    return "DATABASE_URL";
  }
}

/** One sentence (no trailing period) saying why a connection attempt failed. */
function connectFailure(e: unknown, target: string): string {
  const err = e as { code?: string; errno?: string; message?: string };
  const code = String(err?.code ?? err?.errno ?? "");
  const detail = String(err?.message ?? e)
    .split("\n")[0]!
    .trim();
  switch (code) {
    case "ECONNREFUSED":
      return `PostgreSQL at ${target} refused the connection (nothing listens there yet?)`;
    case "ENOTFOUND":
    case "EAI_AGAIN":
    case "EAI_NONAME":
    case "DNSException":
      return `the host of DATABASE_URL (${target}) could not be resolved`;
    case "CONNECT_TIMEOUT":
    case "ETIMEDOUT":
      return `PostgreSQL at ${target} did not answer in time`;
    case "ECONNRESET":
    case "CONNECTION_CLOSED":
    case "CONNECTION_ENDED":
    case "CONNECTION_DESTROYED":
      return `PostgreSQL at ${target} closed the connection before it was ready`;
    case "28P01":
    case "28000":
      return `PostgreSQL at ${target} refused the credentials of DATABASE_URL (${detail})`;
    case "3D000":
      return `PostgreSQL at ${target} has no such database (${detail})`;
    case "57P03":
      return `PostgreSQL at ${target} is starting up`;
    default:
      return `PostgreSQL at ${target} could not be reached (${code ? `${code}: ` : ""}${detail})`;
  }
}

export interface WaitOptions {
  /** Total time to keep trying, in seconds (0 = one attempt). */
  timeoutSeconds: number;
  /** Where each sentence goes (default: stderr). */
  say?: (line: string) => void;
}

/** Resolves true once `select 1` answers, false when the time is up (each failure said). */
export async function waitForPostgres(url: string, o: WaitOptions): Promise<boolean> {
  const say = o.say ?? ((line: string) => process.stderr.write(line + "\n"));
  const target = describeTarget(url);
  const deadline = performance.now() + o.timeoutSeconds * 1000;
  let pause = 250;
  for (let attempt = 1; ; attempt++) {
    const left = Math.max(1, Math.ceil((deadline - performance.now()) / 1000));
    const sql = postgres(url, { max: 1, connect_timeout: Math.min(5, left), idle_timeout: 1, onnotice: () => {} });
    let why: string | null = null;
    try {
      await Promise.race([
        sql`select 1`,
        Bun.sleep((Math.min(5, left) + 1) * 1000).then(() => Promise.reject({ code: "CONNECT_TIMEOUT" })),
      ]);
    } catch (e) {
      why = connectFailure(e, target);
    }
    void sql.end({ timeout: 0 }).catch(() => {});
    if (why === null) {
      if (attempt > 1) say(`PostgreSQL at ${target} answered after ${attempt} attempts.`);
      return true;
    }
    const remaining = deadline - performance.now();
    if (remaining <= 0) {
      say(`${why}.`);
      say(
        `Giving up: no usable connection to PostgreSQL at ${target} within DB_CONNECT_TIMEOUT_SECONDS=${o.timeoutSeconds}.`,
      );
      return false;
    }
    const wait = Math.min(pause, remaining);
    say(`${why}; retrying in ${(wait / 1000).toFixed(1)} s.`);
    await Bun.sleep(wait);
    pause = Math.min(pause * 2, 5000);
  }
}
