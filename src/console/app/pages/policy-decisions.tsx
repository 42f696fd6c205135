/** A policy's recent decisions: the account's latest calls through it, with the header each got. */
import { api } from "../api";
import { krw, time } from "../format";
import { useLoad } from "../hooks";
import { t } from "../i18n";
import { Show } from "../ui";

export function PolicyDecisions({ policy, onClose }: { policy: { id: string; slug: string }; onClose: () => void }) {
  const list = useLoad(() => api("GET", `/v1/routing-policies/${policy.id}/decisions?limit=20`), [policy.id]);
  return (
    <section class="card" aria-labelledby="decisions-title">
      <div class="page-head">
        <h2 id="decisions-title">{t("decisionsOf", { slug: policy.slug })}</h2>
        <button type="button" onClick={onClose}>
          {t("close")}
        </button>
      </div>
      <Show state={list}>
        {(r: any) => (
          <div class="scroll">
            <table>
              <thead>
                <tr>
                  <th scope="col">{t("time")}</th>
                  <th scope="col">{t("model")}</th>
                  <th scope="col">{t("status")}</th>
                  <th scope="col" class="n">
                    {t("cost")}
                  </th>
                  <th scope="col">{t("decision")}</th>
                </tr>
              </thead>
              <tbody>
                {r.data.length ? (
                  r.data.map((x: any) => (
                    <tr>
                      <td>{time(x.created_at)}</td>
                      <td>{x.model}</td>
                      <td>{x.status}</td>
                      <td class="n">{krw(x.cost_krw)}</td>
                      <td>
                        <code>{x.policy_decision}</code>
                      </td>
                    </tr>
                  ))
                ) : (
                  <tr>
                    <td colSpan={5}>{t("noData")}</td>
                  </tr>
                )}
              </tbody>
            </table>
          </div>
        )}
      </Show>
    </section>
  );
}
