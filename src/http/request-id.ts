/** Per-request metadata (id, start time) kept beside the Request object. */
const meta = new WeakMap<Request, { id: string; start: number }>();
const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Assigns the request its id: the client's X-Request-Id when well-formed, else a new UUID. */
export function assignRequestId(request: Request): { id: string; start: number } {
  const given = request.headers.get("x-request-id");
  // The id doubles as the hold id (a UUID column), so a client's id is used only if it is one.
  const id = given && REQUEST_ID.test(given) && /^[0-9a-f-]{36}$/i.test(given) ? given.toLowerCase() : crypto.randomUUID();
  const m = { id, start: performance.now() };
  meta.set(request, m);
  return m;
}

export function requestId(request: Request): string {
  return meta.get(request)?.id ?? "unknown";
}

export function requestStart(request: Request): number | undefined {
  return meta.get(request)?.start;
}
