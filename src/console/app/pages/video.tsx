/** The account's video jobs: status and cost, cancel while processing, a player for stored results. */
import { useEffect, useState } from "preact/hooks";
import { api } from "../api";
import { krw, time } from "../format";
import { useLoad } from "../hooks";
import { t } from "../i18n";
import { ErrorLine, Page, Show } from "../ui";
import { fetchVideo } from "./video-fetch";

export function VideoJobs() {
  const [cursors, setCursors] = useState<string[]>([]);
  const cursor = cursors[cursors.length - 1];
  const list = useLoad(() => api("GET", `/v1/video/jobs?limit=20${cursor ? `&cursor=${cursor}` : ""}`), [cursor]);
  const [error, setError] = useState<Error | null>(null);
  const [playing, setPlaying] = useState<{ id: string; url: string | null; progress: string } | null>(null);
  useEffect(() => () => void (playing?.url && URL.revokeObjectURL(playing.url)), [playing?.url]);
  const cancel = async (id: string) => {
    setError(null);
    try {
      await api("POST", `/v1/video/jobs/${id}/cancel`);
      list.reload();
    } catch (e) {
      setError(e as Error);
    }
  };
  const play = async (job: any) => {
    setError(null);
    setPlaying({ id: job.job_id, url: null, progress: "" });
    try {
      const url = await fetchVideo(job.content_url, (loaded, total) =>
        setPlaying({ id: job.job_id, url: null, progress: `${Math.round((loaded / total) * 100)}%` }),
      );
      setPlaying({ id: job.job_id, url, progress: "" });
    } catch (e) {
      setPlaying(null);
      setError(e as Error);
    }
  };
  return (
    <Page title={t("videoTitle")}>
      <ErrorLine error={error} />
      {playing && (
        <figure class="card">
          {playing.url ? (
            <video src={playing.url} controls data-testid="player" aria-label={`${t("play")} ${playing.id}`} />
          ) : (
            <p aria-busy="true">
              {t("loading")} {playing.progress}
            </p>
          )}
        </figure>
      )}
      <Show state={list}>
        {(r: any) => (
          <>
            <div class="scroll">
              <table>
                <thead>
                  <tr>
                    <th scope="col">{t("time")}</th>
                    <th scope="col">{t("model")}</th>
                    <th scope="col">{t("prompt")}</th>
                    <th scope="col">{t("status")}</th>
                    <th scope="col" class="n">
                      {t("cost")}
                    </th>
                    <th scope="col">{t("actions")}</th>
                  </tr>
                </thead>
                <tbody>
                  {r.data.length ? (
                    r.data.map((j: any) => (
                      <tr data-job-id={j.job_id}>
                        <td>{time(j.created_at)}</td>
                        <td>{j.model}</td>
                        <td>{j.prompt}</td>
                        <td>
                          {j.status}
                          {j.error && <small class="error"> · {j.error.code}</small>}
                        </td>
                        <td class="n">{j.cost ? krw(j.cost.krw) : "–"}</td>
                        <td class="row">
                          {j.status === "processing" && (
                            <button
                              type="button"
                              class="danger"
                              onClick={() => cancel(j.job_id)}
                              aria-label={`${t("cancelJob")} ${j.job_id}`}
                            >
                              {t("cancelJob")}
                            </button>
                          )}
                          {j.content_url && (
                            <button type="button" onClick={() => play(j)} aria-label={`${t("play")} ${j.job_id}`}>
                              {t("play")}
                            </button>
                          )}
                          {!j.content_url && j.result_url && j.status === "succeeded" && (
                            <a href={j.result_url} rel="noreferrer noopener" target="_blank">
                              {t("play")}
                            </a>
                          )}
                        </td>
                      </tr>
                    ))
                  ) : (
                    <tr>
                      <td colSpan={6}>{t("noData")}</td>
                    </tr>
                  )}
                </tbody>
              </table>
            </div>
            <nav class="row" aria-label={t("videoTitle")}>
              <button type="button" disabled={!cursors.length} onClick={() => setCursors(cursors.slice(0, -1))}>
                {t("previous")}
              </button>
              <button type="button" disabled={!r.next_cursor} onClick={() => setCursors([...cursors, r.next_cursor])}>
                {t("next")}
              </button>
            </nav>
          </>
        )}
      </Show>
    </Page>
  );
}
