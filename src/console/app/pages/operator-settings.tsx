/** The routing gates (`GET`/`PATCH /v1/admin/settings`), one switch each. */
import { useState } from "preact/hooks";
import { api } from "../api";
import { useLoad } from "../hooks";
import { t, type MessageKey } from "../i18n";
import { ErrorLine, Show } from "../ui";

const LABELS: Record<string, MessageKey> = {
  "routing.policies_enabled": "policiesEnabled",
  "routing.orchestrators_enabled": "orchestratorsEnabled",
};

export function Settings() {
  const settings = useLoad(() => api<Record<string, boolean>>("GET", "/v1/admin/settings", { auth: "admin" }), []);
  const [error, setError] = useState<Error | null>(null);
  const change = async (key: string, value: boolean) => {
    setError(null);
    try {
      await api("PATCH", "/v1/admin/settings", { auth: "admin", body: { [key]: value } });
      settings.reload();
    } catch (e) {
      setError(e as Error);
    }
  };
  return (
    <Show state={settings}>
      {(s) => (
        <fieldset>
          <legend>{t("settings")}</legend>
          {Object.entries(s).map(([key, value]) => (
            <label class="check">
              <input type="checkbox" checked={value} onChange={() => change(key, !value)} />{" "}
              {LABELS[key] ? t(LABELS[key]!) : key} <code class="muted">{key}</code>
            </label>
          ))}
          <ErrorLine error={error} />
        </fieldset>
      )}
    </Show>
  );
}
