/**
 * The public model catalog: providers, prices per million tokens in KRW and USD (video: KRW per
 * second by resolution, or per 1,000 output tokens), context, capabilities, and each model's
 * deprecation and retirement dates with its successor.
 */
import { useState } from "preact/hooks";
import { api } from "../api";
import { fxRate, krwPrice, num, usd } from "../format";
import { useLoad } from "../hooks";
import { t } from "../i18n";
import { Field, Page, Show } from "../ui";

const price = (v: number | null | undefined) => (v == null ? "–" : `${usd(v)} · ${krwPrice(v * fxRate(), 0)}`);

export function Models() {
  const [q, setQ] = useState("");
  const models = useLoad(() => api("GET", "/v1/models", { auth: "none" }), []);
  return (
    <Page title={t("modelsTitle")}>
      <div class="filters">
        <Field label={t("search")}>
          <input
            type="search"
            value={q}
            placeholder={t("searchPlaceholder")}
            onInput={(e) => setQ((e.target as HTMLInputElement).value)}
          />
        </Field>
      </div>
      <Show state={models}>
        {(m: any) => {
          const needle = q.trim().toLowerCase();
          const rows = m.data.filter(
            (x: any) =>
              !needle ||
              [x.id, x.name, x.maker, ...x.providers.map((p: any) => p.id)].some((s: string) =>
                s?.toLowerCase().includes(needle),
              ),
          );
          return (
            <>
              <p aria-live="polite">{t("modelsCount", { n: rows.length })}</p>
              <div class="scroll">
                <table>
                  <thead>
                    <tr>
                      <th scope="col">{t("model")}</th>
                      <th scope="col">{t("provider")}</th>
                      <th scope="col" class="n">
                        {t("contextLength")}
                      </th>
                      <th scope="col" class="n">
                        {t("inputPrice")}
                      </th>
                      <th scope="col" class="n">
                        {t("outputPrice")}
                      </th>
                      <th scope="col">{t("capabilities")}</th>
                    </tr>
                  </thead>
                  <tbody>
                    {rows.flatMap((x: any) =>
                      (x.providers.length ? x.providers : [null]).map((p: any, i: number) => (
                        <tr>
                          {i === 0 && (
                            <th scope="row" rowSpan={Math.max(1, x.providers.length)}>
                              <span class="model-name">{x.name}</span>
                              <code>{x.id}</code>
                              <small>{x.maker}</small>
                              <Lifecycle model={x} />
                            </th>
                          )}
                          <td>
                            {p?.id ?? "–"} {p && !p.available && <small>({t("unavailable")})</small>}
                          </td>
                          <td class="n">{num(p?.context_length)}</td>
                          {x.modality === "video" ? (
                            <td class="n video-price" colSpan={2}>
                              <VideoPrice model={x} />
                            </td>
                          ) : (
                            <>
                              <td class="n">{price(p?.pricing?.input)}</td>
                              <td class="n">{price(p?.pricing?.output)}</td>
                            </>
                          )}
                          {i === 0 && <td rowSpan={Math.max(1, x.providers.length)}>{capabilities(x.capabilities)}</td>}
                        </tr>
                      )),
                    )}
                  </tbody>
                </table>
              </div>
            </>
          );
        }}
      </Show>
    </Page>
  );
}

/** KRW per second by resolution, or (Family G Omni) per 1,000 output tokens, as `/v1/models` gives them. */
function VideoPrice({ model }: { model: any }) {
  const perSecond: Record<string, number> | undefined = model.pricing_krw_per_second;
  if (perSecond && Object.keys(perSecond).length)
    return (
      <ul class="plain" aria-label={t("videoPrice")}>
        {Object.entries(perSecond).map(([res, v]) => (
          <li>
            {res} {t("perSecond", { price: krwPrice(v, 0) })}
          </li>
        ))}
      </ul>
    );
  if (model.pricing_krw_per_1k_output_tokens != null)
    return <>{t("per1kOutputTokens", { price: krwPrice(model.pricing_krw_per_1k_output_tokens, 0) })}</>;
  return <>–</>;
}

/** The model's deprecation and retirement days and its successor; nothing for a model without them. */
function Lifecycle({ model }: { model: any }) {
  if (!model.deprecated_at && !model.retires_at) return null;
  const retired = model.lifecycle === "retired";
  return (
    <small class={`lifecycle ${model.lifecycle ?? ""}`}>
      {model.deprecated_at && !retired && <span>{t("deprecatedOn", { date: model.deprecated_at })}</span>}
      {model.retires_at && <span>{t(retired ? "retiredOn" : "retiresOn", { date: model.retires_at })}</span>}
      {model.successor && <span>{t("successorIs", { model: model.successor })}</span>}
    </small>
  );
}

function capabilities(c: Record<string, unknown> | null): string {
  if (!c) return "–";
  return (
    Object.entries(c)
      .filter(([, v]) => v === true)
      .map(([k]) => k.replace(/_/g, " "))
      .join(", ") || "–"
  );
}
