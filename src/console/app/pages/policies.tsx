/**
 * Routing policies: the account's and its organizations', created and edited with server-checked
 * forms, deleted after a confirmation.
 */
import { useRef, useState } from "preact/hooks";
import { api } from "../api";
import { time } from "../format";
import { useLoad } from "../hooks";
import { t } from "../i18n";
import { ErrorLine, Page, Show } from "../ui";
import { PolicyForm } from "./policy-form";
import { PolicyDecisions } from "./policy-decisions";

export function Policies() {
  const list = useLoad(() => api("GET", "/v1/routing-policies"), []);
  const [editing, setEditing] = useState<any>(null);
  const [creating, setCreating] = useState(false);
  const [watching, setWatching] = useState<any>(null);
  const [doomed, setDoomed] = useState<any>(null);
  const [deleteError, setDeleteError] = useState<Error | null>(null);
  const dialog = useRef<HTMLDialogElement>(null);
  const askDelete = (p: any) => {
    setDoomed(p);
    setDeleteError(null);
    dialog.current?.showModal();
  };
  const remove = async () => {
    if (!doomed) return;
    try {
      await api("DELETE", `/v1/routing-policies/${doomed.id}`);
    } catch (e) {
      setDeleteError(e as Error);
      return;
    }
    if (editing?.id === doomed.id) setEditing(null);
    if (watching?.id === doomed.id) setWatching(null);
    dialog.current?.close();
    list.reload();
  };
  const create = async (body: Record<string, unknown>) => {
    await api("POST", "/v1/routing-policies", { body });
    setCreating(false);
    list.reload();
  };
  const update = async (body: Record<string, unknown>) => {
    const { slug: _slug, ...rest } = body;
    await api("PATCH", `/v1/routing-policies/${editing.id}`, { body: rest });
    setEditing(null);
    list.reload();
  };
  return (
    <Page
      title={t("policiesTitle")}
      actions={
        <button type="button" class="primary" onClick={() => (setCreating(true), setEditing(null))}>
          {t("newPolicy")}
        </button>
      }
    >
      {creating && <PolicyForm submitLabel={t("create")} onSubmit={create} onCancel={() => setCreating(false)} />}
      {watching && <PolicyDecisions key={watching.id} policy={watching} onClose={() => setWatching(null)} />}
      {editing && (
        <PolicyForm
          key={editing.id}
          initial={editing}
          submitLabel={t("save")}
          onSubmit={update}
          onCancel={() => setEditing(null)}
        />
      )}
      <Show state={list}>
        {(r: any) => (
          <div class="scroll">
            <table>
              <thead>
                <tr>
                  <th scope="col">{t("slug")}</th>
                  <th scope="col">{t("displayName")}</th>
                  <th scope="col">{t("policyType")}</th>
                  <th scope="col">{t("entries")}</th>
                  <th scope="col">{t("status")}</th>
                  <th scope="col">{t("time")}</th>
                  <th scope="col">{t("actions")}</th>
                </tr>
              </thead>
              <tbody>
                {r.items.length ? (
                  r.items.map((p: any) => (
                    <tr>
                      <td>
                        <code>orch/{p.slug}</code>
                      </td>
                      <td>{p.display_name}</td>
                      <td>{p.policy_type}</td>
                      <td>{p.entries.map((e: any) => e.model).join(", ")}</td>
                      <td>{p.is_active ? t("active") : t("disabled")}</td>
                      <td>{time(p.updated_at)}</td>
                      <td class="row">
                        <button
                          type="button"
                          onClick={() => (setEditing(p), setCreating(false))}
                          aria-label={`${t("edit")} ${p.slug}`}
                        >
                          {t("edit")}
                        </button>
                        <button type="button" onClick={() => setWatching(p)} aria-label={`${t("decisions")} ${p.slug}`}>
                          {t("decisions")}
                        </button>
                        <button
                          type="button"
                          class="danger"
                          onClick={() => askDelete(p)}
                          aria-label={`${t("delete")} ${p.slug}`}
                        >
                          {t("delete")}
                        </button>
                      </td>
                    </tr>
                  ))
                ) : (
                  <tr>
                    <td colSpan={7}>{t("noData")}</td>
                  </tr>
                )}
              </tbody>
            </table>
          </div>
        )}
      </Show>
      <dialog ref={dialog} aria-labelledby="delete-policy-title" onClose={() => setDoomed(null)}>
        <p id="delete-policy-title">{doomed && t("confirmDeletePolicy", { slug: doomed.slug })}</p>
        <ErrorLine error={deleteError} />
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
