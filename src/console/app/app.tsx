/** The shell: skip link, navigation, language and theme switches, and the page of the route. */
import { useEffect, useState } from "preact/hooks";
import { lang, setLang, t, type Lang } from "./i18n";
import { useRoute, useSession } from "./hooks";
import { session } from "./session";
import { setTheme, theme } from "./theme";
import { Rankings } from "./pages/rankings";
import { Models } from "./pages/models";
import { SignIn } from "./pages/sign-in";
import { Overview } from "./pages/overview";
import { Keys } from "./pages/keys";
import { Activity } from "./pages/activity";
import { Playground } from "./pages/playground";
import { Operator } from "./pages/operator";
import { ManagementKeys } from "./pages/management-keys";
import { Policies } from "./pages/policies";
import { VideoJobs } from "./pages/video";
import { Billing, BillingResult } from "./pages/billing";

const PUBLIC = { "/rankings": Rankings, "/models": Models, "/sign-in": SignIn, "/operator": Operator } as const;
const PRIVATE = {
  "/overview": Overview,
  "/keys": Keys,
  "/activity": Activity,
  "/playground": Playground,
  "/management-keys": ManagementKeys,
  "/policies": Policies,
  "/video": VideoJobs,
  "/billing": Billing,
  "/billing/result": BillingResult,
} as const;

export function App() {
  const route = useRoute();
  const { jwt, restoring } = useSession();
  const [, rerender] = useState(0);
  // Under 720 px the navigation folds behind a Menu button; following a link folds it again.
  const [menu, setMenu] = useState(false);
  useEffect(() => setMenu(false), [route]);
  const base = route.split("?")[0]!;
  const Public = PUBLIC[base as keyof typeof PUBLIC] as (() => any) | undefined;
  const Private = PRIVATE[base as keyof typeof PRIVATE] as (() => any) | undefined;
  const Current = Public ?? (Private ? (jwt ? Private : restoring ? Restoring : SignIn) : Rankings);
  const link = (href: string, label: string) => (
    <li>
      <a href={`#${href}`} aria-current={base === href ? "page" : undefined}>
        {label}
      </a>
    </li>
  );
  return (
    <>
      <a class="skip" href="#main" onClick={(e) => (e.preventDefault(), document.getElementById("main")?.focus())}>
        {t("skip")}
      </a>
      <header class={menu ? "top open" : "top"}>
        <a class="brand" href="#/rankings">
          {t("appName")}
        </a>
        <button
          type="button"
          class="menu-toggle"
          aria-expanded={menu}
          aria-controls="site-nav"
          onClick={() => setMenu(!menu)}
        >
          {t("menu")}
        </button>
        <nav aria-label={t("appName")} id="site-nav">
          <ul>
            {link("/rankings", t("navRankings"))}
            {link("/models", t("navModels"))}
            {jwt && link("/overview", t("navOverview"))}
            {jwt && link("/keys", t("navKeys"))}
            {jwt && link("/management-keys", t("navMgmtKeys"))}
            {jwt && link("/activity", t("navActivity"))}
            {jwt && link("/policies", t("navPolicies"))}
            {jwt && link("/video", t("navVideo"))}
            {jwt && link("/playground", t("navPlayground"))}
            {jwt && link("/billing", t("navBilling"))}
            {link("/operator", t("navOperator"))}
          </ul>
        </nav>
        <div class="tools">
          <label>
            <span class="sr-only">{t("language")}</span>
            <select
              value={lang()}
              onChange={(e) => (setLang((e.target as HTMLSelectElement).value as Lang), rerender((n) => n + 1))}
            >
              <option value="ko">한국어</option>
              <option value="en">English</option>
            </select>
          </label>
          <button
            type="button"
            aria-pressed={theme() === "dark"}
            onClick={() => (setTheme(theme() === "dark" ? "light" : "dark"), rerender((n) => n + 1))}
          >
            {theme() === "dark" ? t("themeLight") : t("themeDark")}
          </button>
          {jwt ? (
            <button type="button" onClick={() => void session.signOut().then(() => (location.hash = "#/rankings"))}>
              {t("signOut")}
            </button>
          ) : (
            <a class="button" href="#/sign-in">
              {t("navSignIn")}
            </a>
          )}
        </div>
      </header>
      <main id="main" tabIndex={-1} key={lang()}>
        <Current />
      </main>
    </>
  );
}

/** A private page while the session cookie is being traded for a token (a reload, a new tab). */
function Restoring() {
  return (
    <p role="status" class="muted">
      {t("restoringSession")}
    </p>
  );
}
