/**
 * Operator pages behind the admin token typed into the page: accounts (search, balance and
 * flags, top-up with the fee shown before confirming), settings and organizations.
 */
import { useState } from "preact/hooks";
import { api } from "../api";
import { useSession } from "../hooks";
import { t } from "../i18n";
import { session } from "../session";
import { ErrorLine, Field, Page } from "../ui";
import { Accounts } from "./operator-accounts";
import { Settings } from "./operator-settings";
import { Orgs } from "./operator-orgs";

export function Operator() {
  useSession();
  const [token, setToken] = useState("");
  const [error, setError] = useState<Error | null>(null);
  const [tab, setTab] = useState<"accounts" | "settings" | "orgs">("accounts");
  const use = async (e: Event) => {
    e.preventDefault();
    setError(null);
    session.setAdmin(token.trim());
    try {
      await api("GET", "/v1/admin/settings", { auth: "admin" });
      setToken("");
    } catch {
      session.setAdmin(null);
      setError(new Error(t("invalidAdminToken")));
    }
  };
  if (!session.admin())
    return (
      <Page title={t("operatorTitle")}>
        <form class="narrow" onSubmit={use}>
          <Field label={t("adminToken")} hint={t("adminTokenNote")}>
            <input
              type="password"
              autoComplete="off"
              required
              value={token}
              onInput={(e) => setToken((e.target as HTMLInputElement).value)}
            />
          </Field>
          <ErrorLine error={error} />
          <button type="submit" class="primary">
            {t("useToken")}
          </button>
        </form>
      </Page>
    );
  const tabButton = (id: typeof tab, label: string) => (
    <button type="button" aria-pressed={tab === id} onClick={() => setTab(id)}>
      {label}
    </button>
  );
  return (
    <Page
      title={t("operatorTitle")}
      actions={
        <button type="button" onClick={() => session.setAdmin(null)}>
          {t("forgetToken")}
        </button>
      }
    >
      <div class="row tabs" role="group" aria-label={t("operatorTitle")}>
        {tabButton("accounts", t("accounts"))}
        {tabButton("settings", t("settings"))}
        {tabButton("orgs", t("organizations"))}
      </div>
      {tab === "accounts" ? <Accounts /> : tab === "settings" ? <Settings /> : <Orgs />}
    </Page>
  );
}
