/**
 * Organizations: their members with roles and monthly budgets; create one, add or change a
 * member. Owners and members are named by email or by user id (an email is looked up through
 * the operator's account search, exact match only); each change is confirmed in a status line.
 */
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
  const [done, setDone] = useState<string | null>(null);
  const run = (call: () => Promise<string>) => async (e: Event) => {
    e.preventDefault();
    setError(null);
    setDone(null);
    try {
      setDone(await call());
      orgs.reload();
    } catch (err) {
      setError(err as Error);
    }
  };
  const create = run(async () => {
    const o = await api("POST", "/v1/admin/orgs", {
      auth: "admin",
      body: { name: name.trim(), owner_user_id: await userIdOf(owner) },
    });
    setName("");
    setOwner("");
    return t("orgCreated", { name: o.name ?? name.trim() });
  });
  const addMember = run(async () => {
    await api("POST", `/v1/admin/orgs/${member.org}/members`, {
      auth: "admin",
      body: {
        user_id: await userIdOf(member.user),
        role: member.role,
        monthly_budget_krw: member.budget.trim() === "" ? null : Number(member.budget),
      },
    });
    const org = (orgs.data?.data ?? []).find((o: any) => o.org_id === member.org);
    return t("memberSaved", { who: member.user.trim(), org: org?.name ?? "" });
  });
  const setM = (k: keyof typeof member) => (e: Event) =>
    setMember({ ...member, [k]: (e.target as HTMLInputElement).value });
  return (
    <>
      <ErrorLine error={error} />
      <p role="status">{done}</p>
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
          <Field label={t("ownerUserId")} hint={t("emailOrIdHint")}>
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
          <Field label={t("userId")} hint={t("emailOrIdHint")}>
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

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A user id as typed, or the id of the account with exactly this email (none: an error to show). */
async function userIdOf(typed: string): Promise<string> {
  const v = typed.trim();
  if (UUID.test(v) || !v.includes("@")) return v;
  const r = await api("GET", `/v1/admin/users?q=${encodeURIComponent(v)}&limit=50`, { auth: "admin" });
  const hit = (r.data as any[]).find((u) => u.email.toLowerCase() === v.toLowerCase());
  if (!hit) throw new Error(t("noAccountWithEmail", { email: v }));
  return hit.user_id;
}
