/**
 * A streamed chat completion read from the API's server-sent events, as they arrive; its cost
 * is then read back from the account's record of the call (what the ledger charged, exact),
 * not from the stream's rounded `cost.krw`.
 */
import { api, errorOf, headers } from "../api";

export interface StreamEnd {
  usage: { prompt_tokens: number; completion_tokens: number } | null;
  cost: { krw: number; usd: number } | null;
  provider: string | null;
  /** The call's X-Request-Id, and its cost as the ledger charged it (null if not settled in time). */
  requestId: string | null;
  ledgerKrw: number | null;
  /** Milliseconds to the first content and to the end, measured here. */
  firstMs: number | null;
  totalMs: number;
}

export async function streamChat(
  key: string,
  model: string,
  messages: { role: string; content: string }[],
  onText: (text: string) => void,
  signal: AbortSignal,
  options: { temperature?: number } = {},
): Promise<StreamEnd> {
  const start = performance.now();
  const res = await fetch("/v1/chat/completions", {
    method: "POST",
    headers: headers({ bearer: key }, true),
    body: JSON.stringify({ model, messages, stream: true, ...options }),
    signal,
  });
  if (!res.ok || !res.body) throw await errorOf(res);
  const end: StreamEnd = {
    usage: null,
    cost: null,
    provider: null,
    requestId: res.headers.get("x-request-id"),
    ledgerKrw: null,
    firstMs: null,
    totalMs: 0,
  };
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += value;
    let cut: number;
    while ((cut = buffer.indexOf("\n\n")) >= 0) {
      const event = buffer.slice(0, cut);
      buffer = buffer.slice(cut + 2);
      for (const line of event.split("\n")) {
        if (!line.startsWith("data:")) continue;
        const data = line.slice(5).trim();
        if (data === "[DONE]") continue;
        const frame = JSON.parse(data);
        if (frame.error) throw new Error(frame.error.message ?? frame.error.code);
        const text = frame.choices?.[0]?.delta?.content;
        if (text) {
          end.firstMs ??= Math.round(performance.now() - start);
          onText(text);
        }
        if (frame.provider) end.provider = frame.provider;
        if (frame.usage) end.usage = frame.usage;
        if (frame.cost) end.cost = frame.cost;
      }
    }
  }
  end.totalMs = Math.round(performance.now() - start);
  if (end.requestId) end.ledgerKrw = await ledgerCost(end.requestId);
  return end;
}

/** The call's charge from its usage event; the settle runs just behind the answer, so a few tries. */
async function ledgerCost(requestId: string): Promise<number | null> {
  for (let i = 0; i < 20; i++) {
    const r = await api("GET", `/v1/generations/${requestId}`).catch(() => null);
    if (r?.data) return r.data.total_cost_krw;
    await new Promise((ok) => setTimeout(ok, 150 * (i + 1)));
  }
  return null;
}
