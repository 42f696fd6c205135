/** The account at a glance: balance, held credits, this month's spend and requests, 30 days of charts. */
import { useMemo } from "preact/hooks";
import { api } from "../api";
import { Chart, daySeconds, type Series } from "../chart";
import { krw, num } from "../format";
import { useLoad } from "../hooks";
import { t } from "../i18n";
import { Page, Show } from "../ui";

interface Summary {
  days: number;
  from: string;
  by_model: { date: string; model: string; cost_krw: number; prompt_tokens: number; completion_tokens: number }[];
  by_status: { date: string; status: number; requests: number }[];
  latency: { date: string; provider: string; p50_ms: number | null; p95_ms: number | null }[];
}

export function Overview() {
  const state = useLoad(
    () =>
      Promise.all([
        api("GET", "/v1/me"),
        api("GET", "/v1/keys/usage"),
        api<Summary>("GET", "/v1/activity/summary?days=30"),
      ]),
    [],
  );
  return (
    <Page title={t("overviewTitle")}>
      <Show state={state}>
        {([me, usage, summary]) => {
          const spent = usage.items.reduce((s: number, k: any) => s + k.spent_krw, 0);
          const requests = usage.items.reduce((s: number, k: any) => s + k.requests, 0);
          return (
            <>
              <dl class="cards">
                <div class="card">
                  <dt>{t("balance")}</dt>
                  <dd data-testid="balance">{krw(me.balance_krw)}</dd>
                </div>
                <div class="card">
                  <dt>{t("held")}</dt>
                  <dd>{krw(me.held_krw)}</dd>
                </div>
                <div class="card">
                  <dt>{t("monthSpend")}</dt>
                  <dd>{krw(spent)}</dd>
                </div>
                <div class="card">
                  <dt>{t("monthRequests")}</dt>
                  <dd>{num(requests)}</dd>
                </div>
              </dl>
              <h2>{t("last30")}</h2>
              <Charts summary={summary} />
            </>
          );
        }}
      </Show>
    </Page>
  );
}

/** Each series has a value for every day of the window (0 where nothing happened). */
function byDay<R extends { date: string }>(
  days: string[],
  rows: R[],
  key: (r: R) => string,
  value: (r: R) => number | null,
): Series[] {
  const names = [...new Set(rows.map(key))].sort();
  return names.map((name) => {
    const at = new Map(rows.filter((r) => key(r) === name).map((r) => [r.date, value(r)]));
    return { label: name, values: days.map((d) => at.get(d) ?? null) };
  });
}

function Charts({ summary }: { summary: Summary }) {
  const c = useMemo(() => {
    const start = daySeconds(summary.from);
    const days = Array.from({ length: summary.days }, (_, i) =>
      new Date((start + i * 86400) * 1000).toISOString().slice(0, 10),
    );
    const zero = (s: Series[]) => s.map((x) => ({ ...x, values: x.values.map((v) => v ?? 0) }));
    const latency = [
      ...byDay(
        days,
        summary.latency,
        (r) => `${r.provider} p50`,
        (r) => r.p50_ms,
      ),
      ...byDay(
        days,
        summary.latency,
        (r) => `${r.provider} p95`,
        (r) => r.p95_ms,
      ),
    ];
    return {
      x: days.map(daySeconds),
      spend: zero(
        byDay(
          days,
          summary.by_model,
          (r) => r.model,
          (r) => r.cost_krw,
        ),
      ),
      tokens: zero(
        byDay(
          days,
          summary.by_model,
          (r) => r.model,
          (r) => r.prompt_tokens + r.completion_tokens,
        ),
      ),
      status: zero(
        byDay(
          days,
          summary.by_status,
          (r) => String(r.status),
          (r) => r.requests,
        ),
      ),
      latency,
    };
  }, [summary]);
  if (!summary.by_model.length) return <p>{t("noData")}</p>;
  return (
    <div class="grid2">
      <Chart title={t("spendByModel")} x={c.x} series={c.spend} stacked />
      <Chart title={t("tokensByModel")} x={c.x} series={c.tokens} stacked />
      <Chart title={t("requestsByStatus")} x={c.x} series={c.status} stacked />
      <Chart title={t("latencyByProvider")} x={c.x} series={c.latency} />
    </div>
  );
}
