/**
 * Credentials of the tab (docs/console.md, "Sessions"). The dashboard's access token is
 * short-lived and lives in memory only; what survives a reload is the session's refresh
 * cookie, HttpOnly (this script never sees it) and scoped to /v1/auth. At start, and whenever
 * the token is about to expire or is refused, POST /v1/auth/refresh trades the cookie for a new
 * token and a new cookie. The admin token lives in sessionStorage (gone with the tab).
 */
const ADMIN = "gw-console-admin";
/**
 * A flag, no credential: this browser signed in and has not signed out. Without it the page
 * does not ask for a refresh at start, so a visitor's console shows no refused request.
 */
const HINT = "gw-console-session";
let jwt: string | null = null;
let expiresAt = 0;
let lifetime = 0;
let restoring = false;
let pending: Promise<boolean> | null = null;
const listeners = new Set<() => void>();
const changed = () => listeners.forEach((f) => f());
// Another tab signing out signs this one out at once (its token would be refused anyway).
const tabs = typeof BroadcastChannel === "function" ? new BroadcastChannel("gw-console-session") : null;

function keep(token: string, expiresIn: number) {
  jwt = token;
  lifetime = expiresIn * 1000;
  // The token's `exp` is in whole seconds from when the server signed it, up to a second before
  // this answer arrived: counting from now could think it alive for a second after the server
  // refuses it, and the next call would meet a 401 instead of refreshing first.
  expiresAt = Date.now() + lifetime - 1000;
  localStorage.setItem(HINT, "1");
  changed();
}

function forget() {
  jwt = null;
  localStorage.removeItem(HINT);
  changed();
}

/**
 * One refresh at a time across the browser's tabs (a Web Lock where the browser has one): two
 * tabs sending the same cookie at once would look like a stolen token and end the session.
 * True when a new token is kept; a refused cookie signs the tab out; a network or server
 * failure keeps what the tab has.
 */
async function refreshNow(): Promise<boolean> {
  const run = async () => {
    const res = await fetch("/v1/auth/refresh", { method: "POST", credentials: "same-origin" }).catch(() => null);
    if (!res) return false;
    if (!res.ok) {
      // Refused (401: no session, ended, reused): signed out. A server error keeps what the tab has.
      if (res.status === 401 || res.status === 403) forget();
      return false;
    }
    const body = await res.json();
    keep(body.access_token, body.expires_in);
    return true;
  };
  const locks = (navigator as Navigator & { locks?: LockManager }).locks;
  return locks ? locks.request("gw-console-refresh", run) : run();
}

export const session = {
  jwt: () => jwt,
  /** True while the first refresh of the page is under way (private pages wait for it). */
  restoring: () => restoring,
  /** At start: a browser that signed in gets its token back from the cookie. */
  async restore() {
    if (!localStorage.getItem(HINT)) return;
    restoring = true;
    changed();
    await this.refresh();
    restoring = false;
    changed();
  },
  /** A new token from the cookie (shared by the calls asking at the same time). */
  refresh(): Promise<boolean> {
    pending ??= refreshNow().finally(() => (pending = null));
    return pending;
  },
  /** The token, refreshed first when it expires within the next fifth of its life (at most 20 s). */
  async fresh(): Promise<string | null> {
    if (jwt && expiresAt - Date.now() < Math.min(20_000, lifetime / 5)) await this.refresh();
    return jwt;
  },
  signIn(token: string, expiresIn: number) {
    keep(token, expiresIn);
  },
  /** Ends the session on the server (the cookie and its tokens), then here and in the other tabs. */
  async signOut() {
    const token = jwt;
    forget();
    tabs?.postMessage("signed-out");
    await fetch("/v1/auth/logout", {
      method: "POST",
      credentials: "same-origin",
      headers: token ? { authorization: `Bearer ${token}` } : {},
    }).catch(() => null);
  },
  /** The server refused the token and no refresh helped: signed out here. */
  expired() {
    if (jwt) forget();
  },
  admin: () => sessionStorage.getItem(ADMIN),
  setAdmin(token: string | null) {
    if (token) sessionStorage.setItem(ADMIN, token);
    else sessionStorage.removeItem(ADMIN);
    changed();
  },
  subscribe(f: () => void) {
    listeners.add(f);
    return () => void listeners.delete(f);
  },
};

if (tabs)
  tabs.onmessage = () => {
    jwt = null;
    changed();
  };
