/** API keys: this month's usage, create (the secret shown once), edit, disable, delete. */
import { useRef, useState } from "preact/hooks";
import { api } from "../api";
import { krw, num } from "../format";
import { useLoad } from "../hooks";
import { t } from "../i18n";
import { Page, Show } from "../ui";
import { KeyForm, type KeyRecord } from "./key-form";

export function Keys() {
  const state = useLoad(
    () =>
      Promise.all([
        api<{ items: KeyRecord[] }>("GET", "/v1/keys"),
        // This month's spend per key from the usage events, as the overview counts it.
        api("GET", "/v1/activity/summary?days=1"),
      ]),
    [],
  );
  const [creating, setCreating] = useState(false);
  const [secret, setSecret] = useState<KeyRecord | null>(null);
  const [editing, setEditing] = useState<string | null>(null);
  const [doomed, setDoomed] = useState<KeyRecord | null>(null);
  const dialog = useRef<HTMLDialogElement>(null);
  const create = async (body: Record<string, unknown>) => {
    const k = await api<KeyRecord>("POST", "/v1/keys", { body });
    setSecret(k);
    setCreating(false);
    state.reload();
  };
  const patch = async (id: string, body: Record<string, unknown>) => {
    await api("PATCH", `/v1/keys/${id}`, { body });
    setEditing(null);
    state.reload();
  };
  const askDelete = (k: KeyRecord) => {
    setDoomed(k);
    dialog.current?.showModal();
  };
  const remove = async () => {
    if (doomed) await api("DELETE", `/v1/keys/${doomed.id}`);
    dialog.current?.close();
    setDoomed(null);
    state.reload();
  };
  return (
    <Page
      title={t("keysTitle")}
      actions={
        <button type="button" class="primary" onClick={() => (setCreating(true), setSecret(null))}>
          {t("newKey")}
        </button>
      }
    >
      {secret?.key && <Secret record={secret} onClose={() => setSecret(null)} />}
      {creating && (
        <div class="card">
          <h2>{t("newKey")}</h2>
          <KeyForm submitLabel={t("create")} onSubmit={create} onCancel={() => setCreating(false)} />
        </div>
      )}
      <Show state={state}>
        {([keys, usage]) => {
          const used = new Map<string, any>(usage.month.by_key.map((u: any) => [u.key_id, u]));
          return (
            <div class="scroll">
              <table class="cards-sm">
                <thead>
                  <tr>
                    <th scope="col">{t("name")}</th>
                    <th scope="col">{t("prefix")}</th>
                    <th scope="col">{t("status")}</th>
                    <th scope="col" class="n">
                      {t("usageThisMonth")}
                    </th>
                    <th scope="col" class="n">
                      {t("budget")}
                    </th>
                    <th scope="col">{t("actions")}</th>
                  </tr>
                </thead>
                <tbody>
                  {keys.items.map((k) =>
                    editing === k.id ? (
                      <tr>
                        <td colSpan={6}>
                          <KeyForm
                            initial={k}
                            submitLabel={t("save")}
                            onSubmit={(b) => patch(k.id, b)}
                            onCancel={() => setEditing(null)}
                          />
                        </td>
                      </tr>
                    ) : (
                      <tr data-key-id={k.id}>
                        <td data-label={t("name")}>
                          <b>{k.name}</b>
                        </td>
                        <td data-label={t("prefix")}>
                          <code>{k.key_prefix}</code>
                        </td>
                        <td data-label={t("status")}>{k.is_active ? t("active") : t("disabled")}</td>
                        <td class="n" data-testid="key-usage" data-label={t("usageThisMonth")}>
                          {krw(used.get(k.id)?.cost_krw ?? 0)} · {num(used.get(k.id)?.requests ?? 0)} {t("calls")}
                        </td>
                        <td class="n" data-label={t("budget")}>
                          {k.monthly_budget_krw == null ? t("none") : krw(k.monthly_budget_krw)}
                        </td>
                        <td class="row">
                          <button type="button" onClick={() => setEditing(k.id)} aria-label={`${t("edit")} ${k.name}`}>
                            {t("edit")}
                          </button>
                          <button
                            type="button"
                            onClick={() => patch(k.id, { is_active: !k.is_active })}
                            aria-label={`${k.is_active ? t("disable") : t("enable")} ${k.name}`}
                          >
                            {k.is_active ? t("disable") : t("enable")}
                          </button>
                          <button
                            type="button"
                            class="danger"
                            onClick={() => askDelete(k)}
                            aria-label={`${t("delete")} ${k.name}`}
                          >
                            {t("delete")}
                          </button>
                        </td>
                      </tr>
                    ),
                  )}
                </tbody>
              </table>
            </div>
          );
        }}
      </Show>
      <dialog ref={dialog} aria-labelledby="delete-title" onClose={() => setDoomed(null)}>
        <p id="delete-title">{doomed && t("confirmDelete", { name: doomed.name })}</p>
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

/** The new key's secret, once: the API never shows it again. */
export function Secret({ record, onClose }: { record: KeyRecord; onClose: () => void }) {
  const [copied, setCopied] = useState(false);
  const copy = async () => {
    await navigator.clipboard.writeText(record.key!).then(
      () => setCopied(true),
      () => setCopied(false),
    );
  };
  return (
    <div class="secret" role="region" aria-label={t("secretOnce")}>
      <p>{t("secretOnce")}</p>
      <code data-testid="secret">{record.key}</code>
      <button type="button" onClick={copy}>
        {t("copy")}
      </button>
      <span role="status">{copied ? t("copied") : ""}</span>
      <button type="button" onClick={onClose}>
        {t("close")}
      </button>
    </div>
  );
}
