/** Calls to the gateway's own documented API (same origin); errors carry the API's code and message. */
import { lang } from "./i18n";
import { session } from "./session";

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly body: any,
  ) {
    super(message);
  }
}

type Auth = "jwt" | "admin" | "none" | { bearer: string };

function authHeader(auth: Auth): string | null {
  if (auth === "none") return null;
  const token = auth === "jwt" ? session.jwt() : auth === "admin" ? session.admin() : auth.bearer;
  return token ? `Bearer ${token}` : null;
}

export function headers(auth: Auth, json = false): Record<string, string> {
  const h: Record<string, string> = { "accept-language": lang() === "en" ? "en" : "ko" };
  const a = authHeader(auth);
  if (a) h.authorization = a;
  if (json) h["content-type"] = "application/json";
  return h;
}

export async function errorOf(res: Response): Promise<ApiError> {
  const body = await res.json().catch(() => null);
  const e = body?.error;
  const msg =
    e?.message ??
    (Array.isArray(body?.detail) ? body.detail.map((d: any) => d.msg).join(" ") : body?.detail?.message) ??
    res.statusText;
  return new ApiError(res.status, e?.code ?? body?.detail?.error ?? "error", msg, body);
}

export async function api<T = any>(
  method: string,
  path: string,
  opts: { auth?: Auth; body?: unknown; headers?: Record<string, string> } = {},
): Promise<T> {
  const auth = opts.auth ?? "jwt";
  if (auth === "jwt") await session.fresh();
  const send = () =>
    fetch(path, {
      method,
      headers: { ...headers(auth, opts.body !== undefined), ...opts.headers },
      body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
    });
  let res = await send();
  // A refused token (expired, or its session signed out elsewhere): one refresh, one retry.
  if (res.status === 401 && auth === "jwt" && session.jwt()) {
    if (await session.refresh()) res = await send();
    if (res.status === 401) session.expired();
  }
  if (!res.ok) throw await errorOf(res);
  return res.status === 204 ? (undefined as T) : ((await res.json()) as T);
}
