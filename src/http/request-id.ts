import { accountRequestId } from "../core/billing/request-id";

/** Per-request metadata (id, start time) kept beside the Request object. */
const meta = new WeakMap<Request, { id: string; start: number; chosen: boolean }>();
const REQUEST_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Assigns the request its id: the client's X-Request-Id when it is a UUID, else a new one. */
export function assignRequestId(request: Request): { id: string; start: number } {
  const given = request.headers.get("x-request-id");
  const chosen = given !== null && REQUEST_ID.test(given);
  const m = { id: chosen ? given.toLowerCase() : crypto.randomUUID(), start: performance.now(), chosen };
  meta.set(request, m);
  return m;
}

export function requestId(request: Request): string {
  return meta.get(request)?.id ?? "unknown";
}

export function requestStart(request: Request): number | undefined {
  return meta.get(request)?.start;
}

/**
 * The id a model call of account `userId` is held, charged and recorded under. The client sees
 * its request id (X-Request-Id, `chatcmpl-`/`resp_` ids); a client's own id is scoped to the
 * account (core/billing/request-id.ts) and marks the call `clientChosen`: its hold is placed in
 * the database before anything answers it, so a reused id is refused (409) first.
 */
export function callIdentity(request: Request, userId: string): { requestId: string; clientChosen: boolean } {
  const m = meta.get(request);
  if (!m) return { requestId: crypto.randomUUID(), clientChosen: false };
  return m.chosen
    ? { requestId: accountRequestId(userId, m.id), clientChosen: true }
    : { requestId: m.id, clientChosen: false };
}
