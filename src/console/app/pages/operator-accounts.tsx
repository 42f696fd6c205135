/** Accounts: search, balance and flags, and a top-up whose fee and credit are shown before it is confirmed. */
import { useState } from "preact/hooks";
import { api } from "../api";
import { krw, time } from "../format";
import { useLoad } from "../hooks";
import { t } from "../i18n";
import { ErrorLine, Field, Show } from "../ui";

/** The platform fee as the API takes it: 3%, rounded up to the won, out of the amount paid. */
const topupFee = (paid: number) => Math.ceil((paid * 3) / 100);

export function Accounts() {
  const [q, setQ] = useState("");
  const [search, setSearch] = useState("");
  const list = useLoad(
    () => api("GET", `/v1/admin/users?limit=50${search ? `&q=${encodeURIComponent(search)}` : ""}`, { auth: "admin" }),
    [search],
  );
  const [topping, setTopping] = useState<any>(null);
  const [error, setError] = useState<Error | null>(null);
  const flag = async (u: any, field: string, value: boolean) => {
    setError(null);
    try {
      await api("PATCH", `/v1/admin/users/${u.user_id}`, { auth: "admin", body: { [field]: value } });
      list.reload();
    } catch (e) {
      setError(e as Error);
    }
  };
  return (
    <>
      <form class="filters" onSubmit={(e) => (e.preventDefault(), setSearch(q.trim()))}>
        <Field label={t("search")}>
          <input
            type="search"
            placeholder={t("searchAccounts")}
            value={q}
            onInput={(e) => setQ((e.target as HTMLInputElement).value)}
          />
        </Field>
        <button type="submit">{t("search")}</button>
      </form>
      <ErrorLine error={error} />
      {topping && <TopUp account={topping} onDone={() => (setTopping(null), list.reload())} />}
      <Show state={list}>
        {(r: any) => (
          <div class="scroll">
            <table>
              <thead>
                <tr>
                  <th scope="col">{t("email")}</th>
                  <th scope="col" class="n">
                    {t("balance")}
                  </th>
                  <th scope="col" class="n">
                    {t("held")}
                  </th>
                  <th scope="col">{t("regulated")}</th>
                  <th scope="col">{t("consent")}</th>
                  <th scope="col">{t("deleted")}</th>
                  <th scope="col">{t("time")}</th>
                  <th scope="col">{t("actions")}</th>
                </tr>
              </thead>
              <tbody>
                {r.data.map((u: any) => (
                  <tr>
                    <td>
                      {u.email}
                      <br />
                      <code class="muted">{u.user_id}</code>
                    </td>
                    <td class="n">{krw(u.balance_krw)}</td>
                    <td class="n">{krw(u.held_krw)}</td>
                    {(["regulated", "xborder_training_consent", "deleted"] as const).map((f) => (
                      <td>
                        <input
                          type="checkbox"
                          checked={u[f]}
                          aria-label={`${f} ${u.email}`}
                          onChange={() => flag(u, f, !u[f])}
                        />
                      </td>
                    ))}
                    <td>{time(u.created_at)}</td>
                    <td>
                      <button
                        type="button"
                        onClick={() => setTopping(u)}
                        aria-label={t("topUpFor", { email: u.email })}
                      >
                        {t("topUp")}
                      </button>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </Show>
    </>
  );
}

function TopUp({ account, onDone }: { account: any; onDone: () => void }) {
  const [amount, setAmount] = useState("");
  const [error, setError] = useState<Error | null>(null);
  const [busy, setBusy] = useState(false);
  // One Idempotency-Key per form and amount: a double submit or a retry after a lost answer
  // credits once; another amount is another top-up.
  // (getRandomValues: randomUUID needs a secure context, and the console may be served over http.)
  const [form] = useState(() =>
    Array.from(crypto.getRandomValues(new Uint8Array(16)), (b) => b.toString(16).padStart(2, "0")).join(""),
  );
  const paid = Number(amount);
  const valid = Number.isInteger(paid) && paid >= 1;
  const confirm = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      await api("POST", `/v1/admin/users/${account.user_id}/topups`, {
        auth: "admin",
        body: { amount_krw: paid },
        headers: { "idempotency-key": `${form}:${paid}` },
      });
      onDone();
    } catch (err) {
      setError(err as Error);
    } finally {
      setBusy(false);
    }
  };
  return (
    <form class="card narrow" onSubmit={confirm} aria-label={t("topUpFor", { email: account.email })}>
      <h2>{t("topUpFor", { email: account.email })}</h2>
      <Field label={t("amount")}>
        <input
          type="number"
          min={1}
          step={1}
          required
          value={amount}
          onInput={(e) => setAmount((e.target as HTMLInputElement).value)}
        />
      </Field>
      <p role="status" data-testid="topup-fee">
        {valid
          ? t("fee", { fee: topupFee(paid).toLocaleString(), credit: (paid - topupFee(paid)).toLocaleString() })
          : ""}
      </p>
      <ErrorLine error={error} />
      <div class="row">
        <button type="submit" class="primary" disabled={!valid || busy}>
          {t("confirmTopUp")}
        </button>
        <button type="button" onClick={onDone}>
          {t("cancel")}
        </button>
      </div>
    </form>
  );
}
