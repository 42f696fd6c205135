/** Organizations: their members with roles and monthly budgets; create one, add or change a member. */
import { useState } from "preact/hooks";
import { api } from "../api";
import { krw } from "../format";
import { useLoad } from "../hooks";
import { t } from "../i18n";
import { ErrorLine, Field, Show } from "../ui";

export function Orgs() {
  const orgs = useLoad(() => api("GET", "/v1/admin/orgs", { auth: "admin" }), []);
  const [name, setName] = useState("");
  const [owner, setOwner] = useState("");
  const [member, setMember] = useState({ org: "", user: "", role: "member", budget: "" });
  const [error, setError] = useState<Error | null>(null);
  const run = (call: () => Promise<unknown>) => async (e: Event) => {
    e.preventDefault();
    setError(null);
    try {
      await call();
      orgs.reload();
    } catch (err) {
      setError(err as Error);
    }
  };
  const create = run(() =>
    api("POST", "/v1/admin/orgs", { auth: "admin", body: { name: name.trim(), owner_user_id: owner.trim() } }),
  );
  const addMember = run(() =>
    api("POST", `/v1/admin/orgs/${member.org}/members`, {
      auth: "admin",
      body: {
        user_id: member.user.trim(),
        role: member.role,
        monthly_budget_krw: member.budget.trim() === "" ? null : Number(member.budget),
      },
    }),
  );
  const setM = (k: keyof typeof member) => (e: Event) =>
    setMember({ ...member, [k]: (e.target as HTMLInputElement).value });
  return (
    <>
      <ErrorLine error={error} />
      <div class="grid2">
        <form class="card" onSubmit={create}>
          <h2>{t("createOrg")}</h2>
          <Field label={t("name")}>
            <input
              required
              maxLength={100}
              value={name}
              onInput={(e) => setName((e.target as HTMLInputElement).value)}
            />
          </Field>
          <Field label={t("ownerUserId")}>
            <input required value={owner} onInput={(e) => setOwner((e.target as HTMLInputElement).value)} />
          </Field>
          <button type="submit" class="primary">
            {t("create")}
          </button>
        </form>
        <form class="card" onSubmit={addMember}>
          <h2>{t("addMember")}</h2>
          <Field label={t("organization")}>
            <select required value={member.org} onChange={setM("org")}>
              <option value="" />
              {(orgs.data?.data ?? []).map((o: any) => (
                <option value={o.org_id}>{o.name}</option>
              ))}
            </select>
          </Field>
          <Field label={t("userId")}>
            <input required value={member.user} onInput={setM("user")} />
          </Field>
          <Field label={t("role")}>
            <select value={member.role} onChange={setM("role")}>
              <option value="owner">owner</option>
              <option value="admin">admin</option>
              <option value="member">member</option>
            </select>
          </Field>
          <Field label={t("memberBudget")}>
            <input type="number" min={0} step={1} value={member.budget} onInput={setM("budget")} />
          </Field>
          <button type="submit" class="primary">
            {t("save")}
          </button>
        </form>
      </div>
      <Show state={orgs}>
        {(r: any) =>
          r.data.map((o: any) => (
            <section class="card" aria-label={o.name}>
              <h2>{o.name}</h2>
              <table>
                <caption class="sr-only">{t("members")}</caption>
                <thead>
                  <tr>
                    <th scope="col">{t("email")}</th>
                    <th scope="col">{t("role")}</th>
                    <th scope="col" class="n">
                      {t("budget")}
                    </th>
                  </tr>
                </thead>
                <tbody>
                  {o.members.map((m: any) => (
                    <tr>
                      <td>{m.email}</td>
                      <td>{m.role}</td>
                      <td class="n">{m.monthly_budget_krw == null ? t("unlimited") : krw(m.monthly_budget_krw)}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </section>
          ))
        }
      </Show>
    </>
  );
}
