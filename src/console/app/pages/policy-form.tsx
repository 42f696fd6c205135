/** A routing policy's fields, checked by the server as they are typed (half a second after the last key). */
import { useEffect, useRef, useState } from "preact/hooks";
import { t } from "../i18n";
import { Field } from "../ui";
import { checkPolicy, errorsOf, type FieldErrors } from "./policy-check";

export const POLICY_TYPES = ["fallback", "weighted", "latency", "auto", "cascade", "parallel"];

interface Entry {
  model: string;
  weight: string;
  retries: string;
}

export function PolicyForm({
  initial,
  onSubmit,
  onCancel,
  submitLabel,
}: {
  initial?: any;
  onSubmit: (body: Record<string, unknown>) => Promise<void>;
  onCancel: () => void;
  submitLabel: string;
}) {
  const [slug, setSlug] = useState(initial?.slug ?? "");
  const [name, setName] = useState(initial?.display_name ?? "");
  const [type, setType] = useState(initial?.policy_type ?? "fallback");
  const [entries, setEntries] = useState<Entry[]>(
    initial?.entries.map((e: any) => ({
      model: e.model,
      weight: e.weight?.toString() ?? "",
      retries: String(e.retries ?? 0),
    })) ?? [{ model: "", weight: "", retries: "0" }],
  );
  const [config, setConfig] = useState(initial ? JSON.stringify(initial.config, null, 2) : "{}");
  const [active, setActive] = useState(initial?.is_active ?? true);
  const [errors, setErrors] = useState<FieldErrors>({});
  const [state, setState] = useState<"idle" | "checking" | "ok">("idle");

  const body = (): Record<string, unknown> | FieldErrors => {
    let cfg: unknown;
    try {
      cfg = JSON.parse(config);
    } catch {
      cfg = undefined;
    }
    if (!cfg || typeof cfg !== "object" || Array.isArray(cfg)) return { config: t("configNotJson") };
    return {
      slug: slug.trim(),
      display_name: name,
      policy_type: type,
      entries: entries.map((e) => ({
        model: e.model.trim(),
        retries: Number(e.retries || 0),
        ...(e.weight.trim() && { weight: Number(e.weight) }),
      })),
      config: cfg,
      is_active: active,
    };
  };
  const isErrors = (b: object): b is FieldErrors => !("slug" in b && "entries" in b);

  // A new, untouched form is not checked: its empty fields are not mistakes yet.
  const touched = useRef(!!initial);
  useEffect(() => {
    if (!touched.current) return void (touched.current = true);
    const b = body();
    if (isErrors(b)) return void (setErrors(b), setState("idle"));
    setState("checking");
    let live = true;
    const timer = setTimeout(async () => {
      const found = await checkPolicy(b);
      if (!live) return;
      setErrors(found);
      setState(Object.keys(found).length ? "idle" : "ok");
    }, 500);
    return () => {
      live = false;
      clearTimeout(timer);
    };
  }, [slug, name, type, entries, config, active]);

  const submit = async (e: Event) => {
    e.preventDefault();
    const b = body();
    if (isErrors(b)) return setErrors(b);
    try {
      await onSubmit(b);
    } catch (err) {
      setErrors(errorsOf(err));
    }
  };
  const setEntry = (i: number, k: keyof Entry, v: string) =>
    setEntries(entries.map((e, j) => (j === i ? { ...e, [k]: v } : e)));
  return (
    <form class="card" onSubmit={submit} aria-label={submitLabel}>
      <Field label={t("slug")} error={errors.slug}>
        <input
          name="slug"
          value={slug}
          disabled={!!initial}
          onInput={(e) => setSlug((e.target as HTMLInputElement).value)}
        />
      </Field>
      <Field label={t("displayName")} error={errors.display_name}>
        <input name="display_name" value={name} onInput={(e) => setName((e.target as HTMLInputElement).value)} />
      </Field>
      <Field label={t("policyType")} error={errors.policy_type}>
        <select value={type} onChange={(e) => setType((e.target as HTMLSelectElement).value)}>
          {POLICY_TYPES.map((p) => (
            <option value={p}>{p}</option>
          ))}
        </select>
      </Field>
      <fieldset>
        <legend>{t("entries")}</legend>
        {entries.map((e, i) => (
          <div class="row">
            <Field label={`${t("model")} ${i + 1}`}>
              <input value={e.model} onInput={(ev) => setEntry(i, "model", (ev.target as HTMLInputElement).value)} />
            </Field>
            <Field label={`${t("weight")} ${i + 1}`}>
              <input
                type="number"
                min={1}
                value={e.weight}
                onInput={(ev) => setEntry(i, "weight", (ev.target as HTMLInputElement).value)}
              />
            </Field>
            <Field label={`${t("retries")} ${i + 1}`}>
              <input
                type="number"
                min={0}
                max={3}
                value={e.retries}
                onInput={(ev) => setEntry(i, "retries", (ev.target as HTMLInputElement).value)}
              />
            </Field>
            <button
              type="button"
              disabled={entries.length === 1}
              onClick={() => setEntries(entries.filter((_, j) => j !== i))}
              aria-label={`${t("removeEntry")} ${i + 1}`}
            >
              {t("removeEntry")}
            </button>
          </div>
        ))}
        <button
          type="button"
          disabled={entries.length >= 10}
          onClick={() => setEntries([...entries, { model: "", weight: "", retries: "0" }])}
        >
          {t("addEntry")}
        </button>
        {errors.entries && (
          <p role="alert" class="error" data-field="entries">
            {errors.entries}
          </p>
        )}
      </fieldset>
      <Field label={t("config")} error={errors.config}>
        <textarea
          rows={5}
          spellcheck={false}
          value={config}
          onInput={(e) => setConfig((e.target as HTMLTextAreaElement).value)}
        />
      </Field>
      <label class="check">
        <input type="checkbox" checked={active} onChange={() => setActive(!active)} /> {t("isActive")}
      </label>
      {errors.form && (
        <p role="alert" class="error">
          {errors.form}
        </p>
      )}
      <p role="status" class="muted" data-testid="policy-check">
        {state === "checking" ? t("checking") : state === "ok" ? t("checkedOk") : ""}
      </p>
      <div class="row">
        <button type="submit" class="primary">
          {submitLabel}
        </button>
        <button type="button" onClick={onCancel}>
          {t("cancel")}
        </button>
      </div>
    </form>
  );
}
