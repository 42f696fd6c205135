/**
 * Is this error a sign that the database cannot be reached right now (rather than a bug or a
 * bad statement)? Such a request is answered 503 `service_unavailable` and may be retried;
 * it is never a 500. Wrappers (an ORM's query error) are looked through via `cause`.
 */

/** postgres.js / socket error codes of a connection that is down, closing or too slow. */
const CONNECTION_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "EPIPE",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENOTFOUND",
  "EAI_AGAIN",
  "CONNECTION_CLOSED",
  "CONNECTION_ENDED",
  "CONNECTION_DESTROYED",
  "CONNECT_TIMEOUT",
  "QUERY_TIMEOUT",
]);

/**
 * SQLSTATEs of the same kind: class 08 (connection exception), 57P01–57P03 (the server is
 * shutting down or starting), 53300 (too many connections), 57014 (statement cancelled: our
 * query deadline).
 */
const SQLSTATES = /^(08...|57P0[123]|53300|57014)$/;

export function isDatabaseUnavailable(e: unknown): boolean {
  return codesOf(e).some((code) => CONNECTION_CODES.has(code) || SQLSTATES.test(code));
}

/**
 * SQLSTATEs of a client's value the database cannot store: a NUL character (22021) or one
 * outside the encoding (22P05) in text; a timestamp out of range (22008, 22009: e.g. the
 * year +239386, valid ISO 8601) or malformed (22007); a number out of range (22003).
 */
const UNSTORABLE = new Set(["22021", "22P05", "22008", "22009", "22007", "22003"]);

/** The request is at fault, not the server: a 400, never a 500. */
export function isUnstorableValue(e: unknown): boolean {
  return codesOf(e).some((code) => UNSTORABLE.has(code));
}

function codesOf(e: unknown): string[] {
  const out: string[] = [];
  for (let x = e, depth = 0; x && typeof x === "object" && depth < 5; x = (x as { cause?: unknown }).cause, depth++) {
    const code = (x as { code?: unknown }).code;
    if (typeof code === "string") out.push(code);
  }
  return out;
}
