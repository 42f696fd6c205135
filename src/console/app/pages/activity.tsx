/** Every call of the account: filtered, paginated, exported as CSV, each with its detail. */
import { useRef, useState } from "preact/hooks";
import { api } from "../api";
import { krw, num, time } from "../format";
import { useLoad } from "../hooks";
import { t } from "../i18n";
import { ErrorLine, Field, Page, Show } from "../ui";
import { download, toCsv } from "./activity-csv";

interface Filters {
  key_id: string;
  model: string;
  status: string;
  from: string;
  to: string;
}
const EMPTY: Filters = { key_id: "", model: "", status: "", from: "", to: "" };
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
              <table>
                <thead>
                  <tr>
                    <th scope="col">{t("time")}</th>
                    <th scope="col">{t("model")}</th>
                    <th scope="col">{t("provider")}</th>
                    <th scope="col">{t("app")}</th>
                    <th scope="col">{t("api")}</th>
                    <th scope="col" class="n">
                      {t("in")}
                    </th>
                    <th scope="col" class="n">
                      {t("out")}
                    </th>
                    <th scope="col" class="n">
                      {t("cached")}
                    </th>
                    <th scope="col" class="n">
                      {t("cost")}
                    </th>
                    <th scope="col" class="n">
                      {t("latency")}
                    </th>
                    <th scope="col" class="n">
                      {t("ttft")}
                    </th>
                    <th scope="col">{t("streamedCol")}</th>
                    <th scope="col">{t("status")}</th>
                    <th scope="col">{t("requestId")}</th>
                  </tr>
                </thead>
                <tbody>
                  {p.data.length ? (
                    p.data.map((r: any) => (
                      <tr>
                        <td>{time(r.created_at)}</td>
                        <td>{r.model}</td>
                        <td>{r.provider ?? "–"}</td>
                        <td>{r.app ?? "–"}</td>
                        <td>{r.api ?? "–"}</td>
                        <td class="n">{num(r.prompt_tokens)}</td>
                        <td class="n">{num(r.completion_tokens)}</td>
                        <td class="n">{num(r.cached_tokens)}</td>
                        <td class="n">{krw(r.cost_krw, 6)}</td>
                        <td class="n">{r.latency_ms == null ? "–" : `${num(r.latency_ms)} ms`}</td>
                        <td class="n">{r.ttft_ms == null ? "–" : `${num(r.ttft_ms)} ms`}</td>
                        <td>{r.streamed == null ? "–" : r.streamed ? t("yes") : t("no")}</td>
                        <td>
                          {r.status}
                          {r.error_code && <small class="error"> {r.error_code}</small>}
                        </td>
                        <td>
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
                      <td colSpan={14}>{t("noData")}</td>
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
      <dialog ref={dialog} aria-labelledby="detail-title">
        <h2 id="detail-title">{t("details")}</h2>
        {detail && (
          <dl class="detail">
            {Object.entries(detail).map(([k, v]) => (
              <>
                <dt>{k}</dt>
                <dd>{v === null ? "–" : String(v)}</dd>
              </>
            ))}
          </dl>
        )}
        <button type="button" onClick={() => dialog.current?.close()}>
          {t("close")}
        </button>
      </dialog>
    </Page>
  );
}
