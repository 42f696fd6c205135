/** Public rankings: leaderboard, provider market share, the usage series (stacked) and apps. */
import { useMemo, useState } from "preact/hooks";
import { api } from "../api";
import { Chart, daySeconds } from "../chart";
import { num, pct } from "../format";
import { useLoad } from "../hooks";
import { t } from "../i18n";
import { Field, Page, Show } from "../ui";

const get = (path: string) => api("GET", path, { auth: "none" });

export function Rankings() {
  const [period, setPeriod] = useState("weekly");
  const [range, setRange] = useState("30d");
  const [granularity, setGranularity] = useState("day");
  const [top, setTop] = useState(8);
  const rankings = useLoad(() => get(`/v1/stats/rankings?period=${period}`), [period]);
  const apps = useLoad(() => get(`/v1/stats/apps?period=${period}`), [period]);
  const series = useLoad(
    () => get(`/v1/stats/usage-timeseries?range=${range}&granularity=${granularity}&top=${top}`),
    [range, granularity, top],
  );
  const select = (value: string, set: (v: string) => void, options: [string, string][]) => (
    <select value={value} onChange={(e) => set((e.target as HTMLSelectElement).value)}>
      {options.map(([v, l]) => (
        <option value={v}>{l}</option>
      ))}
    </select>
  );
  return (
    <Page title={t("rankingsTitle")}>
      <div class="filters">
        <Field label={t("period")}>
          {select(period, setPeriod, [
            ["daily", t("daily")],
            ["weekly", t("weekly")],
            ["monthly", t("monthly")],
          ])}
        </Field>
      </div>
      <Show state={rankings}>
        {(r: any) => (
          <div class="grid2">
            <div>
              <h2>{t("leaderboard")}</h2>
              <table>
                <thead>
                  <tr>
                    <th scope="col">{t("rank")}</th>
                    <th scope="col">{t("model")}</th>
                    <th scope="col">{t("provider")}</th>
                    <th scope="col" class="n">
                      {t("tokens")}
                    </th>
                    <th scope="col" class="n">
                      {t("trend")}
                    </th>
                  </tr>
                </thead>
                <tbody>
                  {r.leaderboard.length ? (
                    r.leaderboard.map((m: any) => (
                      <tr>
                        <td>{m.rank}</td>
                        <td>{m.model}</td>
                        <td>{m.provider}</td>
                        <td class="n">{num(m.tokens)}</td>
                        <td class="n">{m.trend_pct == null ? "–" : pct(m.trend_pct)}</td>
                      </tr>
                    ))
                  ) : (
                    <tr>
                      <td colSpan={5}>{t("noData")}</td>
                    </tr>
                  )}
                </tbody>
              </table>
            </div>
            <MarketShare rows={r.market_share} />
          </div>
        )}
      </Show>
      <h2>{t("usageOverTime")}</h2>
      <div class="filters">
        <Field label={t("range")}>
          {select(range, setRange, [
            ["30d", "30d"],
            ["12w", "12w"],
            ["24w", "24w"],
          ])}
        </Field>
        <Field label={t("granularity")}>
          {select(granularity, setGranularity, [
            ["day", t("day")],
            ["week", t("week")],
          ])}
        </Field>
        <Field label={t("topN")}>
          {select(
            String(top),
            (v) => setTop(Number(v)),
            [3, 5, 8, 12, 20].map((n) => [String(n), String(n)]),
          )}
        </Field>
      </div>
      <Show state={series}>{(s: any) => <UsageSeries data={s} />}</Show>
      <h2>{t("apps")}</h2>
      <Show state={apps}>
        {(a: any) => (
          <table>
            <thead>
              <tr>
                <th scope="col">{t("rank")}</th>
                <th scope="col">{t("app")}</th>
                <th scope="col" class="n">
                  {t("tokens")}
                </th>
                <th scope="col" class="n">
                  {t("calls")}
                </th>
              </tr>
            </thead>
            <tbody>
              {a.apps.length ? (
                a.apps.map((x: any) => (
                  <tr>
                    <td>{x.rank}</td>
                    <td>{x.app}</td>
                    <td class="n">{num(x.tokens)}</td>
                    <td class="n">{num(x.calls)}</td>
                  </tr>
                ))
              ) : (
                <tr>
                  <td colSpan={4}>{t("noData")}</td>
                </tr>
              )}
            </tbody>
          </table>
        )}
      </Show>
    </Page>
  );
}

function MarketShare({ rows }: { rows: { provider: string; tokens: number; share_pct: number }[] }) {
  const { x, series, categories } = useMemo(
    () => ({
      x: rows.map((_, i) => i),
      series: [{ label: t("share"), values: rows.map((r) => r.share_pct) }],
      categories: rows.map((r) => r.provider),
    }),
    [rows],
  );
  return (
    <div>
      <h2>{t("marketShare")}</h2>
      {rows.length ? (
        <Chart title={t("marketShare")} x={x} series={series} categories={categories} bars />
      ) : (
        <p>{t("noData")}</p>
      )}
      <ul class="legend-list">
        {rows.map((r) => (
          <li>
            {r.provider}: {pct(r.share_pct)}
          </li>
        ))}
      </ul>
    </div>
  );
}

function UsageSeries({
  data,
}: {
  data: { series: string[]; points: { t: string; tokens: Record<string, number> }[] };
}) {
  const { x, series } = useMemo(
    () => ({
      x: data.points.map((p) => daySeconds(p.t)),
      series: data.series.map((name) => ({ label: name, values: data.points.map((p) => p.tokens[name] ?? 0) })),
    }),
    [data],
  );
  return x.length ? <Chart title={t("usageOverTime")} x={x} series={series} stacked /> : <p>{t("noData")}</p>;
}
