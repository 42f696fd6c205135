/** Small hooks: the hash route, a loaded value with its error, the session's changes. */
import { useEffect, useState, useCallback } from "preact/hooks";
import { session } from "./session";

export function useRoute(): string {
  const read = () => location.hash.replace(/^#/, "") || "/rankings";
  const [route, setRoute] = useState(read);
  useEffect(() => {
    const on = () => setRoute(read());
    addEventListener("hashchange", on);
    return () => removeEventListener("hashchange", on);
  }, []);
  return route;
}

export interface Loaded<T> {
  data: T | null;
  error: Error | null;
  loading: boolean;
  reload: () => void;
}

export function useLoad<T>(load: () => Promise<T>, deps: unknown[]): Loaded<T> {
  const [state, setState] = useState<{ data: T | null; error: Error | null; loading: boolean }>({
    data: null,
    error: null,
    loading: true,
  });
  const [tick, setTick] = useState(0);
  useEffect(() => {
    let live = true;
    setState((s) => ({ ...s, loading: true }));
    load().then(
      (data) => live && setState({ data, error: null, loading: false }),
      (error) => live && setState({ data: null, error, loading: false }),
    );
    return () => {
      live = false;
    };
  }, [...deps, tick]);
  const reload = useCallback(() => setTick((n) => n + 1), []);
  return { ...state, reload };
}

/** The tab's token, and whether the page is still getting it back from the session cookie. */
export function useSession(): { jwt: string | null; restoring: boolean } {
  const read = () => ({ jwt: session.jwt(), restoring: session.restoring() });
  const [state, setState] = useState(read);
  useEffect(() => session.subscribe(() => setState(read())), []);
  return state;
}
