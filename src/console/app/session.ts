/**
 * Credentials of the tab. The dashboard token lives in memory only (a reload signs out); the
 * admin token in sessionStorage (gone with the tab). Neither ever touches localStorage.
 */
const ADMIN = "gw-console-admin";
let jwt: string | null = null;
const listeners = new Set<() => void>();

export const session = {
  jwt: () => jwt,
  signIn(token: string) {
    jwt = token;
    listeners.forEach((f) => f());
  },
  signOut() {
    jwt = null;
    listeners.forEach((f) => f());
  },
  admin: () => sessionStorage.getItem(ADMIN),
  setAdmin(token: string | null) {
    if (token) sessionStorage.setItem(ADMIN, token);
    else sessionStorage.removeItem(ADMIN);
    listeners.forEach((f) => f());
  },
  subscribe(f: () => void) {
    listeners.add(f);
    return () => void listeners.delete(f);
  },
};
