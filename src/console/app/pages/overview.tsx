/**
 * The account at a glance: balance, held credits, this month's spend and requests, and its
 * charts. Every figure comes from `/v1/me` (balance) and `/v1/activity/summary` (the usage
 * events of every key the account had, deleted ones included); the window starts at the
 * account's first call (at least a week, at most 30 days) so a new account is not one spike.
 */
import { useMemo, useState } from "preact/hooks";
import { api } from "../api";
import { Chart, daySeconds, type Series } from "../chart";
import { krw, num } from "../format";
import { useLoad } from "../hooks";
import { t } from "../i18n";
import { Page, Show } from "../ui";
import { ByTable, keyLabel, type Summary } from "./overview-tables";

const DAY = 86_400;
const MIN_DAYS = 7;

export function Overview() {
  const state = useLoad(
    () => Promise.all([api("GET", "/v1/me"), api<Summary>("GET", "/v1/activity/summary?days=30")]),
    [],
  );
  return (
    <Page title={t("overviewTitle")}>
      <Show state={state}>
        {([me, summary]) => (
          <>
            <dl class="cards">
              <div class="card">
                <dt>{t("balance")}</dt>
                <dd data-testid="balance">{krw(me.balance_krw)}</dd>
              </div>
              <div class="card">
                <dt>{t("held")}</dt>
                <dd data-testid="held">{krw(me.held_krw)}</dd>
              </div>
              <div class="card">
                <dt>{t("monthSpend")}</dt>
                <dd data-testid="month-spend">{krw(summary.month.cost_krw)}</dd>
              </div>
              <div class="card">
                <dt>{t("monthRequests")}</dt>
                <dd data-testid="month-requests">{num(summary.month.requests)}</dd>
              </div>
            </dl>
            <Charts summary={summary} />
          </>
        )}
      </Show>
    </Page>
  );
}

/** Each series has a value for every day of the window (null where nothing happened). */
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

const zero = (s: Series[]) => s.map((x) => ({ ...x, values: x.values.map((v) => v ?? 0) }));
/** Largest first by the window's total, so the legend reads as a ranking. */
const ranked = (s: Series[]) =>
  [...s].sort(
    (a, b) => b.values.reduce<number>((n, v) => n + (v ?? 0), 0) - a.values.reduce<number>((n, v) => n + (v ?? 0), 0),
  );
const ms = (v: number) =>
  v >= 10_000 ? `${(v / 1000).toLocaleString(undefined, { maximumFractionDigits: 1 })} s` : `${num(Math.round(v))} ms`;

type Metric = "spend" | "requests" | "tokens";

function Charts({ summary }: { summary: Summary }) {
  const [metric, setMetric] = useState<Metric>("spend");
  const c = useMemo(() => {
    const today = daySeconds(new Date().toISOString().slice(0, 10));
    const windowStart = daySeconds(summary.from);
    const first = summary.first_activity ? daySeconds(summary.first_activity) : today;
    const start = Math.max(windowStart, Math.min(first, today - (MIN_DAYS - 1) * DAY));
    const n = Math.round((today - start) / DAY) + 1;
    const days = Array.from({ length: n }, (_, i) => new Date((start + i * DAY) * 1000).toISOString().slice(0, 10));
    const names = new Map(summary.keys.map((k) => [k.key_id ?? "", keyLabel(k)]));
    const modelValue = (r: Summary["by_model"][number]) =>
      metric === "spend" ? r.cost_krw : metric === "requests" ? r.requests : r.prompt_tokens + r.completion_tokens;
    const modalities = [...new Set(summary.latency_by_modality.map((r) => r.modality))].sort();
    const percentiles = <R extends { date: string; p50_ms: number | null; p95_ms: number | null }>(rows: R[]) => [
      ...byDay(
        days,
        rows,
        () => "p50",
        (r) => r.p50_ms,
      ),
      ...byDay(
        days,
        rows,
        () => "p95",
        (r) => r.p95_ms,
      ),
    ];
    return {
      from: days[0]!,
      x: days.map(daySeconds),
      byModel: ranked(zero(byDay(days, summary.by_model, (r) => r.model, modelValue))),
      byKey: ranked(
        zero(
          byDay(
            days,
            summary.by_key,
            (r) => names.get(r.key_id ?? "") ?? t("noKey"),
            (r) => (metric === "spend" ? r.cost_krw : r.requests),
          ),
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
      latency: modalities.map((m) => ({
        modality: m,
        series: percentiles(summary.latency_by_modality.filter((r) => r.modality === m)),
      })),
      ttft: percentiles(summary.ttft),
    };
  }, [summary, metric]);
  if (!summary.by_model.length) return <p>{t("noData")}</p>;
  const fmt = metric === "spend" ? krw : num;
  const keyMetric = metric === "tokens" ? "requests" : metric;
  return (
    <>
      <div class="page-head">
        <h2>{t("rangeSince", { from: c.from })}</h2>
        <fieldset class="segmented">
          <legend class="sr-only">{t("metric")}</legend>
          {(["spend", "requests", "tokens"] as const).map((m) => (
            <label>
              <input type="radio" name="metric" checked={metric === m} onChange={() => setMetric(m)} />
              {t(m === "spend" ? "metricSpend" : m === "requests" ? "metricRequests" : "metricTokens")}
            </label>
          ))}
        </fieldset>
      </div>
      <div class="grid2">
        <Chart
          title={`${t("byModel")} · ${t(metricLabel(metric))}`}
          x={c.x}
          series={c.byModel}
          stacked
          bars
          format={fmt}
        />
        <Chart
          title={`${t("byKey")} · ${t(metricLabel(keyMetric))}`}
          x={c.x}
          series={c.byKey}
          stacked
          bars
          format={keyMetric === "spend" ? krw : num}
        />
      </div>
      <div class="grid2">
        <ByTable summary={summary} by="model" />
        <ByTable summary={summary} by="key" />
      </div>
      <div class="grid2">
        <Chart title={t("requestsByStatus")} x={c.x} series={c.status} stacked bars format={num} />
        {c.ttft[0]?.values.some((v) => v != null) && (
          <Chart title={t("ttftChat")} x={c.x} series={c.ttft} format={ms} legend="last" />
        )}
        {c.latency.map((l) => (
          <Chart title={t("latencyOf", { modality: l.modality })} x={c.x} series={l.series} format={ms} legend="last" />
        ))}
      </div>
    </>
  );
}

const metricLabel = (m: Metric) =>
  m === "spend" ? "metricSpend" : m === "requests" ? "metricRequests" : "metricTokens";
