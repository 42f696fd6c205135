/**
 * Auto top-up on /billing (docs/payments.md): a card saved at the provider, then a threshold
 * and an amount; off by default. The fee of each automatic charge is shown before it is on.
 */
import { useState } from "preact/hooks";
import { api } from "../api";
import { krw } from "../format";
import { useLoad } from "../hooks";
import { t } from "../i18n";
import { ErrorLine, Field, Show } from "../ui";
import { feeOf } from "./billing";
import { loadTossSdk, type TossCheckout } from "./toss-widget";

export function AutoTopup({ info }: { info: any }) {
  const state = useLoad(() => api("GET", "/v1/billing/auto-topup"), []);
  return (
    <Show state={state}>
      {(a: any) => (a.supported ? <AutoForm info={info} auto={a} reload={state.reload} /> : null)}
    </Show>
  );
}

function AutoForm({ info, auto, reload }: { info: any; auto: any; reload: () => void }) {
  const [enabled, setEnabled] = useState<boolean>(auto.enabled);
  const [threshold, setThreshold] = useState<number>(auto.threshold_krw || 5_000);
  const [amount, setAmount] = useState<number>(auto.amount_krw || 10_000);
  const [error, setError] = useState<Error | null>(null);
  const [saved, setSaved] = useState(false);
  const [busy, setBusy] = useState(false);
  const cardResult = new URLSearchParams(location.hash.split("?")[1] ?? "").get("card");
  const fee = feeOf(amount, info.fee_percent);
  const registerCard = async () => {
    setBusy(true);
    setError(null);
    try {
      const r = await api("POST", "/v1/billing/auto-topup/card");
      if (r.checkout.type === "redirect") location.assign(r.checkout.url);
      else await tossBillingAuth(r.checkout);
    } catch (err) {
      setError(err as Error);
      setBusy(false);
    }
  };
  const save = async (e: Event) => {
    e.preventDefault();
    setError(null);
    setSaved(false);
    try {
      await api("PUT", "/v1/billing/auto-topup", { body: { enabled, threshold_krw: threshold, amount_krw: amount } });
      setSaved(true);
      reload();
    } catch (err) {
      setError(err as Error);
    }
  };
  const removeCard = async () => {
    await api("DELETE", "/v1/billing/auto-topup/card").catch((err) => setError(err));
    reload();
  };
  return (
    <section class="card" aria-labelledby="auto-title">
      <h2 id="auto-title">{t("autoTopup")}</h2>
      {cardResult === "saved" && <p role="status">{t("cardSaved")}</p>}
      {cardResult === "failed" && (
        <p role="alert" class="error">
          {t("cardNotSaved")}
        </p>
      )}
      {auto.last_error && (
        <p role="alert" class="error">
          {t("autoTopupFailed", { reason: auto.last_error })}
        </p>
      )}
      <p>
        {auto.card ? (
          <>
            {t("savedCard")}: <code data-testid="saved-card">{auto.card}</code>{" "}
            <button type="button" class="link" onClick={removeCard}>
              {t("removeCard")}
            </button>
          </>
        ) : (
          <button type="button" disabled={busy} onClick={registerCard}>
            {t("registerCard")}
          </button>
        )}
      </p>
      <form class="narrow" onSubmit={save}>
        <label class="check">
          <input type="checkbox" checked={enabled} disabled={!auto.card} onChange={() => setEnabled(!enabled)} />{" "}
          {t("autoTopupOn")}
        </label>
        <Field label={t("autoThreshold")}>
          <input
            type="number"
            min={0}
            max={info.max_krw}
            step={1}
            value={threshold}
            onInput={(e) => setThreshold(Number((e.target as HTMLInputElement).value))}
          />
        </Field>
        <Field label={t("autoAmount")}>
          <input
            type="number"
            min={info.min_krw}
            max={info.max_krw}
            step={1}
            value={amount}
            onInput={(e) => setAmount(Number((e.target as HTMLInputElement).value))}
          />
        </Field>
        <p class="muted" data-testid="auto-fee">
          {t("autoFee", { amount: krw(amount), fee: krw(fee), credit: krw(amount - fee), threshold: krw(threshold) })}
        </p>
        <button type="submit" class="primary">
          {t("save")}
        </button>
        {saved && <p role="status">{t("autoSaved")}</p>}
      </form>
      <ErrorLine error={error} />
    </section>
  );
}

/** Toss's card registration window for automatic payments (SDK v2). */
async function tossBillingAuth(c: Pick<TossCheckout, "client_key" | "customer_key" | "success_url" | "fail_url">) {
  await loadTossSdk();
  await window.TossPayments!(c.client_key)
    .payment({ customerKey: c.customer_key })
    .requestBillingAuth({ method: "CARD", successUrl: c.success_url, failUrl: c.fail_url });
}
