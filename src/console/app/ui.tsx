/** Shared pieces: a page's loading and error states, a labelled field, a status line. */
import { cloneElement, isValidElement, type ComponentChildren } from "preact";
import { useId } from "preact/hooks";
import { t } from "./i18n";
import type { Loaded } from "./hooks";

export function Page({
  title,
  children,
  actions,
}: {
  title: string;
  children: ComponentChildren;
  actions?: ComponentChildren;
}) {
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

/**
 * A control with its label. The label names the control through aria-labelledby, so a select's
 * accessible name is the label alone (wrapping would add the chosen option's text to it).
 */
export function Field({
  label,
  children,
  hint,
  error,
}: {
  label: string;
  children: ComponentChildren;
  hint?: string;
  error?: string | null;
}) {
  const id = useId();
  const control = isValidElement(children)
    ? cloneElement(children, { "aria-labelledby": id, ...(hint && { "aria-describedby": `${id}-hint` }) })
    : children;
  return (
    <label class="field">
      <span id={id}>{label}</span>
      {control}
      {hint && <small id={`${id}-hint`}>{hint}</small>}
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
