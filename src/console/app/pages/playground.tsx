/**
 * A streamed chat with any text model of the catalog, charged to the account through a key of
 * its own: the console creates "console-playground" on request and keeps its secret in this
 * tab's memory only (an earlier one, whose secret is gone with its tab, is deleted then). An
 * optional system prompt goes first in every request, and a temperature when one is set (empty:
 * the model's default).
 */
import { useRef, useState } from "preact/hooks";
import { api } from "../api";
import { krw, num } from "../format";
import { useLoad } from "../hooks";
import { t } from "../i18n";
import { ErrorLine, Field, Page, Show } from "../ui";
import { streamChat, type StreamEnd } from "./chat-stream";

const PLAYGROUND_KEY_NAME = "console-playground";
let playgroundKey: string | null = null;

interface Turn {
  role: "user" | "assistant";
  content: string;
  stats?: StreamEnd;
}

async function makeKey(): Promise<string> {
  const keys = await api("GET", "/v1/keys");
  for (const k of keys.items.filter((k: any) => k.name === PLAYGROUND_KEY_NAME))
    await api("DELETE", `/v1/keys/${k.id}`);
  const created = await api("POST", "/v1/keys", { body: { name: PLAYGROUND_KEY_NAME, scopes: ["chat"] } });
  return created.key;
}

export function Playground() {
  const [key, setKey] = useState(playgroundKey);
  const models = useLoad(() => api("GET", "/v1/models", { auth: "none" }), []);
  const [model, setModel] = useState("gpt-4o-mini");
  const [text, setText] = useState("");
  const [system, setSystem] = useState("");
  const [temperature, setTemperature] = useState("");
  const [turns, setTurns] = useState<Turn[]>([]);
  const [error, setError] = useState<Error | null>(null);
  const [busy, setBusy] = useState(false);
  const abort = useRef<AbortController | null>(null);
  const createKey = async () => {
    setError(null);
    try {
      playgroundKey = await makeKey();
      setKey(playgroundKey);
    } catch (e) {
      setError(e as Error);
    }
  };
  const send = async (e: Event) => {
    e.preventDefault();
    if (!key || !text.trim()) return;
    const history: Turn[] = [...turns, { role: "user", content: text }];
    setTurns([...history, { role: "assistant", content: "" }]);
    setText("");
    setBusy(true);
    setError(null);
    abort.current = new AbortController();
    let answer = "";
    try {
      const messages = [
        ...(system.trim() ? [{ role: "system", content: system }] : []),
        ...history.map(({ role, content }) => ({ role, content })),
      ];
      const stats = await streamChat(
        key,
        model,
        messages,
        (piece) => {
          answer += piece;
          setTurns([...history, { role: "assistant", content: answer }]);
        },
        abort.current.signal,
        temperature.trim() === "" ? {} : { temperature: Number(temperature) },
      );
      setTurns([...history, { role: "assistant", content: answer, stats }]);
    } catch (err) {
      if ((err as Error).name !== "AbortError") setError(err as Error);
    } finally {
      setBusy(false);
    }
  };
  return (
    <Page title={t("playgroundTitle")}>
      <p class="muted">{t("playgroundKeyNote")}</p>
      {!key ? (
        <button type="button" class="primary" onClick={createKey}>
          {t("createPlaygroundKey")}
        </button>
      ) : (
        <>
          <Show state={models}>
            {(m: any) => (
              <Field label={t("model")}>
                <select value={model} onChange={(e) => setModel((e.target as HTMLSelectElement).value)}>
                  {m.data
                    .filter((x: any) => x.modality === "text" && x.available)
                    .map((x: any) => (
                      <option value={x.id}>{x.id}</option>
                    ))}
                </select>
              </Field>
            )}
          </Show>
          <div class="row">
            <Field label={t("systemPrompt")} hint={t("systemPromptHint")}>
              <textarea
                rows={2}
                name="system"
                value={system}
                onInput={(e) => setSystem((e.target as HTMLTextAreaElement).value)}
              />
            </Field>
            <Field label={t("temperature")} hint={t("temperatureHint")}>
              <input
                type="number"
                name="temperature"
                min={0}
                max={2}
                step={0.1}
                value={temperature}
                onInput={(e) => setTemperature((e.target as HTMLInputElement).value)}
              />
            </Field>
          </div>
          <ol class="chat" aria-live="polite">
            {turns.map((turn) => (
              <li class="bubble">
                <span class="who">{turn.role === "user" ? t("you") : t("assistant")}</span>
                {turn.content}
                {turn.stats && (
                  <small class="muted stats" data-testid="answer-stats">
                    {t("answerStats", {
                      in: num(turn.stats.usage?.prompt_tokens),
                      out: num(turn.stats.usage?.completion_tokens),
                      cost: krw(turn.stats.ledgerKrw),
                      ms: num(turn.stats.totalMs),
                    })}
                    {turn.stats.provider && ` · ${turn.stats.provider}`}
                    {turn.stats.firstMs !== null && ` · TTFT ${num(turn.stats.firstMs)} ms`}
                  </small>
                )}
              </li>
            ))}
          </ol>
          <form class="row" onSubmit={send}>
            <Field label={t("message")}>
              <textarea rows={3} value={text} onInput={(e) => setText((e.target as HTMLTextAreaElement).value)} />
            </Field>
            <button type="submit" class="primary" disabled={busy}>
              {t("send")}
            </button>
            {busy && (
              <button type="button" onClick={() => abort.current?.abort()}>
                {t("stop")}
              </button>
            )}
          </form>
        </>
      )}
      <ErrorLine error={error} />
    </Page>
  );
}
