/**
 * Sign up and sign in. The sign-in asks for a console session: the refresh cookie (HttpOnly) and
 * a short-lived token kept in memory only (src/console/app/session.ts).
 */
import { useState } from "preact/hooks";
import { api } from "../api";
import { t } from "../i18n";
import { session } from "../session";
import { ErrorLine, Field, Page } from "../ui";

export function SignIn() {
  const [mode, setMode] = useState<"in" | "up">("in");
  const [email, setEmail] = useState("");
  const [password, setPassword] = useState("");
  const [error, setError] = useState<Error | null>(null);
  const [note, setNote] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      if (mode === "up") {
        await api("POST", "/v1/auth/signup", { auth: "none", body: { email, password } });
        setNote(t("signedUp"));
        setMode("in");
      } else {
        const r = await api("POST", "/v1/auth/login", {
          auth: "none",
          body: { email, password, refresh_cookie: true },
        });
        session.signIn(r.access_token, r.expires_in);
        const wanted = location.hash.replace(/^#/, "");
        location.hash = wanted && wanted !== "/sign-in" ? `#${wanted}` : "#/overview";
      }
    } catch (err) {
      setError(err as Error);
    } finally {
      setBusy(false);
    }
  };
  return (
    <Page title={mode === "in" ? t("signInTitle") : t("signUpTitle")}>
      <form class="narrow" onSubmit={submit}>
        {note && <p role="status">{note}</p>}
        <Field label={t("email")}>
          <input
            type="email"
            name="email"
            autoComplete="username"
            required
            value={email}
            onInput={(e) => setEmail((e.target as HTMLInputElement).value)}
          />
        </Field>
        <Field label={t("password")} hint={mode === "up" ? t("passwordHint") : undefined}>
          <input
            type="password"
            name="password"
            autoComplete={mode === "up" ? "new-password" : "current-password"}
            minLength={mode === "up" ? 8 : 1}
            required
            value={password}
            onInput={(e) => setPassword((e.target as HTMLInputElement).value)}
          />
        </Field>
        <ErrorLine error={error} />
        <button type="submit" class="primary" disabled={busy}>
          {mode === "in" ? t("signInButton") : t("signUpButton")}
        </button>
        <button type="button" class="link" onClick={() => (setMode(mode === "in" ? "up" : "in"), setError(null))}>
          {mode === "in" ? t("needAccount") : t("haveAccount")}
        </button>
        <p class="muted">{t("sessionNote")}</p>
      </form>
    </Page>
  );
}
