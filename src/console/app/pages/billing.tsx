/**
 * Buying credits (docs/payments.md): the amount, the 3 % fee and the credit shown before
 * paying, the provider's checkout (a redirect, or Toss's widget on this page), and the
 * account's billing history with its running balance and a CSV export. Without a provider
 * the page says top-ups are by the operator.
 */
import { useState } from "preact/hooks";
import { api, errorOf, headers } from "../api";
import { krw, time } from "../format";
import { useLoad } from "../hooks";
import { t, type MessageKey } from "../i18n";
import { ErrorLine, Field, Page, Show } from "../ui";
import { download } from "./activity-csv";
import { renderTossWidget, type TossCheckout } from "./toss-widget";
import { AutoTopup } from "./billing-auto";

const PRESETS = [10_000, 20_000, 50_000, 100_000];

/** The fee as the server computes it: 3 %, rounded up to the won. */
export const feeOf = (amount: number, percent: number) => Math.ceil((amount * percent) / 100);

export function Billing() {
  const info = useLoad(() => api("GET", "/v1/billing"), []);
  return (
    <Page title={t("billingTitle")}>
      <Show state={info}>
        {(b: any) => (
          <>
            <dl class="cards">
              <div class="card">
                <dt>{t("balance")}</dt>
                <dd data-testid="billing-balance">{krw(b.balance_krw)}</dd>
              </div>
            </dl>
            {b.provider ? (
              <>
                <BuyForm info={b} />
                <AutoTopup info={b} />
              </>
            ) : (
              <p role="status" class="card">
                {t("topupsByOperator")}
              </p>
            )}
          </>
        )}
      </Show>
      <History />
    </Page>
  );
}

function BuyForm({ info }: { info: any }) {
  const [amount, setAmount] = useState(10_000);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<Error | null>(null);
  const [pay, setPay] = useState<(() => Promise<void>) | null>(null);
  const valid = Number.isInteger(amount) && amount >= info.min_krw && amount <= info.max_krw;
  const fee = valid ? feeOf(amount, info.fee_percent) : 0;
  const start = async (e: Event) => {
    e.preventDefault();
    if (busy || !valid) return; // a double click starts one checkout
    setBusy(true);
    setError(null);
    try {
      const r = await api("POST", "/v1/billing/checkout", { body: { amount_krw: amount } });
      if (r.checkout.type === "redirect") {
        location.assign(r.checkout.url);
        return;
      }
      const requestPayment = await renderTossWidget(r.checkout as TossCheckout, "#toss-methods", "#toss-agreement");
      setPay(() => requestPayment);
    } catch (err) {
      setError(err as Error);
    }
    setBusy(false);
  };
  return (
    <section class="card" aria-labelledby="buy-title">
      <h2 id="buy-title">{t("buyCredits")}</h2>
      <form class="narrow" onSubmit={start}>
        <div class="row" role="group" aria-label={t("presets")}>
          {PRESETS.map((p) => (
            <button type="button" aria-pressed={amount === p} onClick={() => setAmount(p)}>
              {krw(p)}
            </button>
          ))}
        </div>
        <Field label={t("amount")} hint={t("amountRange", { min: krw(info.min_krw), max: krw(info.max_krw) })}>
          <input
            type="number"
            inputMode="numeric"
            min={info.min_krw}
            max={info.max_krw}
            step={1}
            required
            value={amount}
            onInput={(e) => setAmount(Number((e.target as HTMLInputElement).value))}
          />
        </Field>
        <p data-testid="billing-fee" aria-live="polite">
          {valid
            ? t("feeBeforePaying", { percent: info.fee_percent, fee: krw(fee), credit: krw(amount - fee) })
            : t("amountOutOfRange")}
        </p>
        <button type="submit" class="primary" disabled={busy || !valid || !!pay}>
          {t("payAmount", { amount: krw(valid ? amount : 0) })}
        </button>
        {info.provider === "sim" && <p class="muted">{t("simulatedPayments")}</p>}
      </form>
      <div id="toss-methods" />
      <div id="toss-agreement" />
      {pay && (
        <button type="button" class="primary" onClick={() => pay().catch((e: Error) => setError(e))}>
          {t("payAmount", { amount: krw(amount) })}
        </button>
      )}
      <ErrorLine error={error} />
    </section>
  );
}

const TYPE_LABEL: Record<string, MessageKey> = {
  topup: "historyTopup",
  operator_topup: "historyOperatorTopup",
  refund: "historyRefund",
  failed: "historyFailed",
  canceled: "historyCanceled",
  pending: "historyPending",
};

function History() {
  const state = useLoad(() => api("GET", "/v1/billing/history"), []);
  const [error, setError] = useState<Error | null>(null);
  const exportCsv = async () => {
    setError(null);
    try {
      const res = await fetch("/v1/billing/history?format=csv&limit=10000", { headers: headers("jwt") });
      if (!res.ok) throw await errorOf(res);
      download("billing-history.csv", await res.text());
    } catch (err) {
      setError(err as Error);
    }
  };
  return (
    <section aria-labelledby="history-title">
      <div class="page-head">
        <h2 id="history-title">{t("billingHistory")}</h2>
        <button type="button" onClick={exportCsv}>
          {t("exportCsv")}
        </button>
      </div>
      <ErrorLine error={error} />
      <Show state={state}>
        {(h: any) => (
          <div class="scroll">
            <table>
              <thead>
                <tr>
                  <th scope="col">{t("time")}</th>
                  <th scope="col">{t("historyType")}</th>
                  <th scope="col" class="n">
                    {t("paid")}
                  </th>
                  <th scope="col" class="n">
                    {t("feeCol")}
                  </th>
                  <th scope="col" class="n">
                    {t("credited")}
                  </th>
                  <th scope="col" class="n">
                    {t("balanceAfter")}
                  </th>
                  <th scope="col">{t("order")}</th>
                </tr>
              </thead>
              <tbody>
                {h.items.length ? (
                  h.items.map((r: any) => (
                    <tr>
                      <td>{time(r.at)}</td>
                      <td>
                        {t(TYPE_LABEL[r.type] ?? "historyPending")}
                        {r.failure_code && <small class="error"> {r.failure_code}</small>}
                      </td>
                      <td class="n">{r.paid_krw == null ? "–" : krw(r.paid_krw)}</td>
                      <td class="n">{r.fee_krw == null ? "–" : krw(r.fee_krw)}</td>
                      <td class="n">{r.amount_krw == null ? "–" : krw(Number(r.amount_krw))}</td>
                      <td class="n">{r.balance_krw == null ? "–" : krw(Number(r.balance_krw))}</td>
                      <td>{r.order_id ? <code>{r.order_id.slice(0, 12)}</code> : "–"}</td>
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
    </section>
  );
}

const RESULT: Record<string, MessageKey> = {
  paid: "resultPaid",
  failed: "resultFailed",
  canceled: "resultCanceled",
  pending: "resultPending",
};

/** Where the gateway sends the customer back from the provider (`#/billing/result?order_id=…`). */
export function BillingResult() {
  const q = new URLSearchParams(location.hash.split("?")[1] ?? "");
  const orderId = q.get("order_id") ?? "";
  const state = useLoad(() => api("GET", `/v1/billing/payments/${encodeURIComponent(orderId)}`), [orderId]);
  return (
    <Page title={t("billingResultTitle")}>
      {q.get("status") === "error" && (
        <p role="alert" class="error">
          {t("resultError", { code: q.get("code") ?? "" })}
        </p>
      )}
      <Show state={state}>
        {(p: any) => (
          <section class="card" data-testid="billing-result">
            <p role="status">
              {t(RESULT[p.status] ?? "resultPending", { credit: krw(p.credited_krw), paid: krw(p.paid_krw) })}
            </p>
            {p.failure_message && <p class="muted">{p.failure_message}</p>}
            <dl class="detail">
              <dt>{t("paid")}</dt>
              <dd>{krw(p.paid_krw)}</dd>
              <dt>{t("feeCol")}</dt>
              <dd>{krw(p.fee_krw)}</dd>
              <dt>{t("credited")}</dt>
              <dd>{krw(p.credited_krw)}</dd>
              <dt>{t("order")}</dt>
              <dd>
                <code>{p.order_id}</code>
              </dd>
            </dl>
          </section>
        )}
      </Show>
      <p>
        <a href="#/billing">{t("backToBilling")}</a>
      </p>
    </Page>
  );
}
