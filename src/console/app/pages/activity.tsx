/** Every call of the account: filtered, paginated, exported as CSV, each with its detail. */
import { useRef, useState } from "preact/hooks";
import { api } from "../api";
import { krw, num, time } from "../format";
import { useLoad } from "../hooks";
import { t } from "../i18n";
import { ErrorLine, Field, Page, Show } from "../ui";
import { download, toCsv } from "./activity-csv";
import { Detail } from "./activity-detail";

interface Filters {
  request_id: string;
  key_id: string;
  model: string;
  status: string;
  from: string;
  to: string;
}
const EMPTY: Filters = { request_id: "", key_id: "", model: "", status: "", from: "", to: "" };
const PAGE = 25;
const CSV_MAX_ROWS = 10_000;

const query = (f: Filters, extra: Record<string, string> = {}) => {
  const q = new URLSearchParams(extra);
  for (const [k, v] of Object.entries(f)) if (v) q.set(k, v.trim());
  return q.toString();
};

export function Activity() {
  const [draft, setDraft] = useState<Filters>(EMPTY);
  const [filters, setFilters] = useState<Filters>(EMPTY);
  // Cursors of the pages before this one, so Previous goes back exactly.
  const [cursors, setCursors] = useState<string[]>([]);
  const cursor = cursors[cursors.length - 1];
  const keys = useLoad(() => api("GET", "/v1/keys"), []);
  const page = useLoad(
    () => api("GET", `/v1/activity?${query(filters, { limit: String(PAGE), ...(cursor && { cursor }) })}`),
    [filters, cursor],
  );
  const [detail, setDetail] = useState<any>(null);
  const [csvError, setCsvError] = useState<Error | null>(null);
  const dialog = useRef<HTMLDialogElement>(null);
  const set = (k: keyof Filters) => (e: Event) => setDraft({ ...draft, [k]: (e.target as HTMLInputElement).value });
  const open = async (id: string) => {
    setDetail((await api("GET", `/v1/generations/${id}`)).data);
    dialog.current?.showModal();
  };
  const exportCsv = async () => {
    setCsvError(null);
    try {
      const rows: any[] = [];
      let next: string | null = null;
      do {
        const r: any = await api(
          "GET",
          `/v1/activity?${query(filters, { limit: "200", ...(next && { cursor: next }) })}`,
        );
        rows.push(...r.data);
        next = r.next_cursor;
      } while (next && rows.length < CSV_MAX_ROWS);
      download(`activity-${new Date().toISOString().slice(0, 10)}.csv`, toCsv(rows));
    } catch (e) {
      setCsvError(e as Error);
    }
  };
  return (
    <Page
      title={t("activityTitle")}
      actions={
        <button type="button" onClick={exportCsv}>
          {t("exportCsv")}
        </button>
      }
    >
      <ErrorLine error={csvError} />
      <form class="filters" onSubmit={(e) => (e.preventDefault(), setCursors([]), setFilters(draft))}>
        <Field label={t("searchRequest")}>
          <input
            type="search"
            value={draft.request_id}
            onInput={set("request_id")}
            placeholder="00000000-0000-…"
            spellcheck={false}
            size={20}
          />
        </Field>
        <Field label={t("key")}>
          <select value={draft.key_id} onChange={set("key_id")}>
            <option value="">{t("allKeys")}</option>
            {(keys.data?.items ?? []).map((k: any) => (
              <option value={k.id}>{k.name}</option>
            ))}
          </select>
        </Field>
        <Field label={t("model")}>
          <input value={draft.model} onInput={set("model")} />
        </Field>
        <Field label={t("status")}>
          <select value={draft.status} onChange={set("status")}>
            <option value="">{t("allStatuses")}</option>
            <option value="success">{t("success")}</option>
            <option value="error">{t("failure")}</option>
          </select>
        </Field>
        <Field label={t("from")}>
          <input type="date" value={draft.from} onInput={set("from")} />
        </Field>
        <Field label={t("to")}>
          <input type="date" value={draft.to} onInput={set("to")} />
        </Field>
        <button type="submit">{t("apply")}</button>
      </form>
      <Show state={page}>
        {(p: any) => (
          <>
            <div class="scroll">
              <table class="activity cards-sm">
                <thead>
                  <tr>
                    <th scope="col">{t("time")}</th>
                    <th scope="col">
                      {t("model")} <small>{t("provider")}</small>
                    </th>
                    <th scope="col">
                      {t("app")} <small>{t("api")}</small>
                    </th>
                    <th scope="col" class="n">
                      {t("in")} → {t("out")} <small>{t("cached")}</small>
                    </th>
                    <th scope="col" class="n">
                      {t("cost")}
                    </th>
                    <th scope="col" class="n">
                      {t("latency")} <small>{t("ttft")}</small>
                    </th>
                    <th scope="col">{t("status")}</th>
                    <th scope="col">{t("requestId")}</th>
                  </tr>
                </thead>
                <tbody>
                  {p.data.length ? (
                    p.data.map((r: any) => (
                      <tr>
                        <td data-label={t("time")}>{time(r.created_at)}</td>
                        <td data-label={t("model")}>
                          <span class="model-name">{r.model}</span>
                          <small class="muted">{r.provider ?? "–"}</small>
                        </td>
                        <td data-label={t("app")}>
                          {r.app ?? "–"}{" "}
                          <small class="muted">
                            {r.api ?? ""}
                            {r.streamed ? ` · ${t("streamedCol")}` : ""}
                          </small>
                        </td>
                        <td class="n" data-label={`${t("in")} → ${t("out")}`}>
                          {num(r.prompt_tokens)} → {num(r.completion_tokens)}
                          {r.cached_tokens > 0 && <small class="muted"> ({num(r.cached_tokens)})</small>}
                        </td>
                        <td class="n" data-label={t("cost")} data-cost>
                          {krw(r.cost_krw)}
                        </td>
                        <td class="n" data-label={t("latency")}>
                          {r.latency_ms == null ? "–" : `${num(r.latency_ms)} ms`}
                          {r.ttft_ms != null && <small class="muted"> · {num(r.ttft_ms)} ms</small>}
                        </td>
                        <td data-label={t("status")}>
                          {r.status}
                          {r.error_code && <small class="error"> {r.error_code}</small>}
                        </td>
                        <td data-label={t("requestId")}>
                          <button
                            type="button"
                            class="link"
                            onClick={() => open(r.request_id)}
                            aria-label={`${t("details")} ${r.request_id}`}
                          >
                            <code>{r.request_id.slice(0, 8)}</code>
                          </button>
                        </td>
                      </tr>
                    ))
                  ) : (
                    <tr>
                      <td colSpan={8}>{t("noData")}</td>
                    </tr>
                  )}
                </tbody>
              </table>
            </div>
            <nav class="row" aria-label={t("activityTitle")}>
              <button type="button" disabled={!cursors.length} onClick={() => setCursors(cursors.slice(0, -1))}>
                {t("previous")}
              </button>
              <button type="button" disabled={!p.next_cursor} onClick={() => setCursors([...cursors, p.next_cursor])}>
                {t("next")}
              </button>
            </nav>
          </>
        )}
      </Show>
      <dialog ref={dialog} aria-labelledby="detail-title" class="wide">
        <h2 id="detail-title">{t("details")}</h2>
        {detail && <Detail g={detail} />}
        <button type="button" onClick={() => dialog.current?.close()}>
          {t("close")}
        </button>
      </dialog>
    </Page>
  );
}
