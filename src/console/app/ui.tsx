/** Shared pieces: a page's loading and error states, a labelled field, a status line. */
import type { ComponentChildren } from "preact";
import { t } from "./i18n";
import type { Loaded } from "./hooks";

export function Page({ title, children, actions }: { title: string; children: ComponentChildren; actions?: ComponentChildren }) {
  return (
    <section aria-labelledby="page-title">
      <header class="page-head">
        <h1 id="page-title">{title}</h1>
        {actions}
      </header>
      {children}
    </section>
  );
}

export function Show<T>({ state, children }: { state: Loaded<T>; children: (data: T) => ComponentChildren }) {
  if (state.error)
    return (
      <p role="alert" class="error">
        {t("error")}: {state.error.message}{" "}
        <button type="button" onClick={state.reload}>
          {t("retry")}
        </button>
      </p>
    );
  if (state.data === null) return <p aria-busy="true">{t("loading")}</p>;
  return <>{children(state.data)}</>;
}

export function Field({ label, children, hint, error }: { label: string; children: ComponentChildren; hint?: string; error?: string | null }) {
  return (
    <label class="field">
      <span>{label}</span>
      {children}
      {hint && <small>{hint}</small>}
      {error && (
        <small role="alert" class="error">
          {error}
        </small>
      )}
    </label>
  );
}

export function ErrorLine({ error }: { error: Error | null }) {
  return error ? (
    <p role="alert" class="error">
      {error.message}
    </p>
  ) : null;
}
