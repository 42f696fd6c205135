/**
 * One call's detail (`GET /v1/generations/{id}`): what it was, what it cost (the rounded figure
 * and the exact one), and its attempt trail: each provider tried, in order, with its outcome,
 * the failure's reason and upstream status, and its time; and the routing policy's decision.
 */
import { krw, num, time } from "../format";
import { t } from "../i18n";

interface Attempt {
  provider: string;
  model: string;
  outcome: string | null;
  reason: string | null;
  status: number | null;
  ms: number | null;
}

/** The policy decision header (`<engine>; policy=<slug>; k=v; …`) as label and value pairs. */
const decisionParts = (d: string) =>
  d.split(";").map((p, i) => {
    const [k, ...v] = p.trim().split("=");
    return i === 0 || !v.length ? ["engine", p.trim()] : [k!, v.join("=")];
  });

export function Detail({ g }: { g: any }) {
  const trail: Attempt[] | null = g.attempts;
  const single: Attempt[] = g.provider_name
    ? [
        {
          provider: g.provider_name,
          model: g.model,
          outcome: g.status < 400 ? "ok" : "failed",
          reason: g.error_code,
          status: null,
          ms: g.latency,
        },
      ]
    : [];
  const rows = trail ?? single;
  const fields: [string, string][] = [
    [t("time"), time(g.created_at)],
    [t("requestId"), g.id],
    [t("model"), g.model],
    [t("provider"), g.provider_name ?? "–"],
    [t("api"), `${g.api ?? "–"}${g.streamed ? ` · ${t("streamedCol")}` : ""}`],
    [t("status"), `${g.status}${g.error_code ? ` ${g.error_code}` : ""}`],
    [
      `${t("in")} → ${t("out")} (${t("cached")})`,
      `${num(g.tokens_prompt)} → ${num(g.tokens_completion)} (${num(g.native_tokens_cached)})`,
    ],
    [t("cost"), krw(g.total_cost_krw)],
    [t("exactCost"), `₩${g.total_cost_krw}${g.total_cost == null ? "" : ` · $${g.total_cost}`}`],
    [t("latency"), g.latency == null ? "–" : `${num(g.latency)} ms`],
    [t("ttft"), g.time_to_first_token == null ? "–" : `${num(g.time_to_first_token)} ms`],
    [t("app"), g.app ?? "–"],
    [t("key"), g.api_key_id ?? "–"],
  ];
  return (
    <>
      <dl class="detail">
        {fields.map(([k, v]) => (
          <>
            <dt>{k}</dt>
            <dd>{v}</dd>
          </>
        ))}
      </dl>
      {g.policy_decision && (
        <>
          <h3>{t("decision")}</h3>
          <dl class="detail" data-testid="policy-decision">
            {decisionParts(g.policy_decision).map(([k, v]) => (
              <>
                <dt>{k}</dt>
                <dd>{v}</dd>
              </>
            ))}
          </dl>
        </>
      )}
      <h3>{t("attempts")}</h3>
      {!trail && rows.length > 0 && <p class="muted">{t("firstTry")}</p>}
      {rows.length > 0 && (
        <div class="scroll">
          <table data-testid="attempts">
            <thead>
              <tr>
                <th scope="col">#</th>
                <th scope="col">{t("provider")}</th>
                <th scope="col">{t("outcome")}</th>
                <th scope="col">{t("reason")}</th>
                <th scope="col" class="n">
                  {t("latency")}
                </th>
              </tr>
            </thead>
            <tbody>
              {rows.map((a, i) => (
                <tr class={a.outcome === "ok" ? "" : "failed"}>
                  <td>{i + 1}</td>
                  <td>
                    {a.provider} <small class="muted">{a.model}</small>
                  </td>
                  <td>{a.outcome ?? "–"}</td>
                  <td>
                    {a.reason ?? "–"}
                    {a.status != null && <small class="muted"> HTTP {a.status}</small>}
                  </td>
                  <td class="n">{a.ms == null ? "–" : `${num(a.ms)} ms`}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </>
  );
}
