/** Every field of an API key record, for creating one or editing it. */
import { useState } from "preact/hooks";
import { t } from "../i18n";
import { ErrorLine, Field } from "../ui";

export interface KeyRecord {
  id: string;
  name: string;
  key_prefix: string;
  key?: string;
  allowed_models: string[] | null;
  monthly_budget_krw: number | null;
  monthly_token_limit: number | null;
  expires_at: string | null;
  is_active: boolean;
  pii_masking_enabled: boolean;
  response_cache_mode: "off" | "exact" | "semantic";
  scopes: string[] | null;
  ip_allowlist: string[] | null;
}

const list = (s: string) => {
  const items = s
    .split(",")
    .map((x) => x.trim())
    .filter(Boolean);
  return items.length ? items : null;
};
const int = (s: string) => (s.trim() === "" ? null : Number(s));
/** `datetime-local` has no zone: the value is the browser's local time. */
const localInput = (iso: string | null) =>
  iso ? new Date(new Date(iso).getTime() - new Date().getTimezoneOffset() * 60000).toISOString().slice(0, 16) : "";

export function KeyForm({
  initial,
  submitLabel,
  onSubmit,
  onCancel,
}: {
  initial?: KeyRecord;
  submitLabel: string;
  onSubmit: (body: Record<string, unknown>) => Promise<void>;
  onCancel?: () => void;
}) {
  const [name, setName] = useState(initial?.name ?? "");
  const [budget, setBudget] = useState(initial?.monthly_budget_krw?.toString() ?? "");
  const [tokens, setTokens] = useState(initial?.monthly_token_limit?.toString() ?? "");
  const [expires, setExpires] = useState(localInput(initial?.expires_at ?? null));
  const [models, setModels] = useState(initial?.allowed_models?.join(", ") ?? "");
  const [ips, setIps] = useState(initial?.ip_allowlist?.join(", ") ?? "");
  const [scopes, setScopes] = useState<string[]>(initial?.scopes ?? ["chat", "usage:read"]);
  const [pii, setPii] = useState(initial?.pii_masking_enabled ?? false);
  const [cache, setCache] = useState(initial?.response_cache_mode ?? "off");
  const [active, setActive] = useState(initial?.is_active ?? true);
  const [error, setError] = useState<Error | null>(null);
  const [busy, setBusy] = useState(false);
  const value = (set: (v: string) => void) => (e: Event) => set((e.target as HTMLInputElement).value);
  const toggleScope = (s: string) => setScopes(scopes.includes(s) ? scopes.filter((x) => x !== s) : [...scopes, s]);
  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      await onSubmit({
        name: name.trim() || null,
        monthly_budget_krw: int(budget),
        monthly_token_limit: int(tokens),
        expires_at: expires ? new Date(expires).toISOString() : null,
        allowed_models: list(models),
        ip_allowlist: list(ips),
        scopes,
        pii_masking_enabled: pii,
        response_cache_mode: cache,
        is_active: active,
      });
    } catch (err) {
      setError(err as Error);
    } finally {
      setBusy(false);
    }
  };
  return (
    <form class="key-form" onSubmit={submit}>
      <Field label={t("name")}>
        <input name="name" maxLength={100} value={name} onInput={value(setName)} />
      </Field>
      <Field label={t("budget")}>
        <input name="monthly_budget_krw" type="number" min={0} step={1} value={budget} onInput={value(setBudget)} />
      </Field>
      <Field label={t("tokenLimit")}>
        <input name="monthly_token_limit" type="number" min={0} step={1} value={tokens} onInput={value(setTokens)} />
      </Field>
      <Field label={t("expiresAt")}>
        <input name="expires_at" type="datetime-local" value={expires} onInput={value(setExpires)} />
      </Field>
      <Field label={t("allowedModels")}>
        <input name="allowed_models" value={models} onInput={value(setModels)} />
      </Field>
      <Field label={t("ipAllowlist")}>
        <input name="ip_allowlist" value={ips} onInput={value(setIps)} />
      </Field>
      <fieldset>
        <legend>{t("scopes")}</legend>
        {["chat", "usage:read"].map((s) => (
          <label class="check">
            <input type="checkbox" checked={scopes.includes(s)} onChange={() => toggleScope(s)} /> {s}
          </label>
        ))}
      </fieldset>
      <Field label={t("cacheMode")}>
        <select
          name="response_cache_mode"
          value={cache}
          onChange={(e) => setCache((e.target as HTMLSelectElement).value as typeof cache)}
        >
          <option value="off">off</option>
          <option value="exact">exact</option>
          <option value="semantic">semantic</option>
        </select>
      </Field>
      <label class="check">
        <input type="checkbox" checked={pii} onChange={() => setPii(!pii)} /> {t("piiMasking")}
      </label>
      <label class="check">
        <input type="checkbox" checked={active} onChange={() => setActive(!active)} /> {t("isActive")}
      </label>
      <ErrorLine error={error} />
      <div class="row">
        <button type="submit" class="primary" disabled={busy}>
          {submitLabel}
        </button>
        {onCancel && (
          <button type="button" onClick={onCancel}>
            {t("cancel")}
          </button>
        )}
      </div>
    </form>
  );
}
