/**
 * Management keys: create (the secret shown once), delete (optionally with every key it
 * provisioned), and each one's child keys, found by `management_key_id` on the key records.
 */
import { useRef, useState } from "preact/hooks";
import { api } from "../api";
import { krw, time } from "../format";
import { useLoad } from "../hooks";
import { t } from "../i18n";
import { ErrorLine, Field, Page, Show } from "../ui";
import { Secret } from "./keys";

export function ManagementKeys() {
  const state = useLoad(() => Promise.all([api("GET", "/v1/management-keys"), api("GET", "/v1/keys")]), []);
  const [name, setName] = useState("");
  const [secret, setSecret] = useState<any>(null);
  const [error, setError] = useState<Error | null>(null);
  const [doomed, setDoomed] = useState<any>(null);
  const [cascade, setCascade] = useState(false);
  const dialog = useRef<HTMLDialogElement>(null);
  const create = async (e: Event) => {
    e.preventDefault();
    setError(null);
    try {
      setSecret(await api("POST", "/v1/management-keys", { body: { name: name.trim() } }));
      setName("");
      state.reload();
    } catch (err) {
      setError(err as Error);
    }
  };
  const remove = async () => {
    setError(null);
    try {
      await api("DELETE", `/v1/management-keys/${doomed.id}?cascade=${cascade}`);
    } catch (err) {
      setError(err as Error);
    }
    dialog.current?.close();
    state.reload();
  };
  return (
    <Page title={t("mgmtKeysTitle")}>
      {secret?.key && <Secret record={secret} onClose={() => setSecret(null)} />}
      <form class="row" onSubmit={create}>
        <Field label={t("name")}>
          <input required maxLength={100} value={name} onInput={(e) => setName((e.target as HTMLInputElement).value)} />
        </Field>
        <button type="submit" class="primary">
          {t("newMgmtKey")}
        </button>
      </form>
      <ErrorLine error={error} />
      <Show state={state}>
        {([mgmt, keys]) =>
          mgmt.items.map((m: any) => {
            const children = keys.items.filter((k: any) => k.management_key_id === m.id);
            return (
              <section class="card" aria-label={m.name}>
                <div class="page-head">
                  <h2>
                    {m.name} <code class="muted">{m.key_prefix}</code>
                  </h2>
                  <button
                    type="button"
                    class="danger"
                    aria-label={`${t("delete")} ${m.name}`}
                    onClick={() => (setDoomed(m), setCascade(false), dialog.current?.showModal())}
                  >
                    {t("delete")}
                  </button>
                </div>
                <p class="muted">
                  {t("createdAt")}: {time(m.created_at)}
                </p>
                <h3>{t("childKeys")}</h3>
                {children.length ? (
                  <ul>
                    {children.map((k: any) => (
                      <li>
                        {k.name} <code class="muted">{k.key_prefix}</code> ·{" "}
                        {k.monthly_budget_krw == null ? t("unlimited") : krw(k.monthly_budget_krw)} ·{" "}
                        {k.is_active ? t("active") : t("disabled")}
                      </li>
                    ))}
                  </ul>
                ) : (
                  <p class="muted">{t("noChildren")}</p>
                )}
              </section>
            );
          })
        }
      </Show>
      <dialog ref={dialog} aria-labelledby="mgmt-delete-title">
        <p id="mgmt-delete-title">{doomed && t("confirmDeleteMgmt", { name: doomed.name })}</p>
        <label class="check">
          <input type="checkbox" checked={cascade} onChange={() => setCascade(!cascade)} /> {t("deleteChildrenToo")}
        </label>
        <div class="row">
          <button type="button" class="danger" onClick={remove}>
            {t("delete")}
          </button>
          <button type="button" onClick={() => dialog.current?.close()}>
            {t("cancel")}
          </button>
        </div>
      </dialog>
    </Page>
  );
}
