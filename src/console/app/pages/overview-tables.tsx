/** The overview's tables: the window's requests and spend per model and per key (deleted keys marked), with each one's share. */
import { krw, num, pct } from "../format";
import { t } from "../i18n";

interface KeyTotal {
  key_id: string | null;
  name: string | null;
  deleted: boolean;
  requests: number;
  cost_krw: number;
}

/** `GET /v1/activity/summary` as the overview reads it. */
export interface Summary {
  days: number;
  from: string;
  first_activity: string | null;
  month: { from: string; requests: number; cost_krw: number; by_key: KeyTotal[] };
  keys: KeyTotal[];
  by_model: {
    date: string;
    model: string;
    requests: number;
    cost_krw: number;
    prompt_tokens: number;
    completion_tokens: number;
  }[];
  by_key: { date: string; key_id: string | null; requests: number; cost_krw: number }[];
  by_status: { date: string; status: number; requests: number }[];
  latency_by_modality: { date: string; modality: string; p50_ms: number | null; p95_ms: number | null }[];
  ttft: { date: string; p50_ms: number | null; p95_ms: number | null }[];
}

/** A key's name; a deleted key's marked, since its calls still count. */
export function keyLabel(k: { key_id: string | null; name: string | null; deleted: boolean }): string {
  if (!k.key_id) return t("noKey");
  return `${k.name ?? k.key_id.slice(0, 8)}${k.deleted ? ` (${t("deletedKey")})` : ""}`;
}

interface Row {
  label: string;
  requests: number;
  cost: number;
}

function rows(summary: Summary, by: "model" | "key"): Row[] {
  if (by === "key") return summary.keys.map((k) => ({ label: keyLabel(k), requests: k.requests, cost: k.cost_krw }));
  const m = new Map<string, Row>();
  for (const r of summary.by_model) {
    const row = m.get(r.model) ?? { label: r.model, requests: 0, cost: 0 };
    row.requests += r.requests;
    row.cost += r.cost_krw;
    m.set(r.model, row);
  }
  return [...m.values()].sort((a, b) => b.cost - a.cost || b.requests - a.requests);
}

export function ByTable({ summary, by }: { summary: Summary; by: "model" | "key" }) {
  const list = rows(summary, by);
  const total = list.reduce((s, r) => s + r.cost, 0);
  return (
    <div class="scroll">
      <table data-testid={`by-${by}`}>
        <caption class="sr-only">{t(by === "model" ? "byModel" : "byKey")}</caption>
        <thead>
          <tr>
            <th scope="col">{t(by === "model" ? "model" : "key")}</th>
            <th scope="col" class="n">
              {t("metricRequests")}
            </th>
            <th scope="col" class="n">
              {t("cost")}
            </th>
            <th scope="col" class="n">
              {t("share")}
            </th>
          </tr>
        </thead>
        <tbody>
          {list.map((r) => (
            <tr>
              <th scope="row">{r.label}</th>
              <td class="n">{num(r.requests)}</td>
              <td class="n" data-cost>
                {krw(r.cost)}
              </td>
              <td class="n">{total > 0 ? pct((r.cost / total) * 100) : "–"}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
