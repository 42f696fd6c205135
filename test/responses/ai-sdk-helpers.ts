/**
 * The Vercel AI SDK's default OpenAI provider (`createOpenAI(...)(model)`: the Responses API)
 * aimed at a test gateway, with the request bodies it sends kept so a test can see what the
 * SDK put on the wire (item references, full items, `store`). `extra` fields are merged into
 * every body, the way a caller adds gateway extensions (`plugins`) the SDK does not know.
 */
import { createOpenAI } from "@ai-sdk/openai";
import type { TestGateway } from "../harness";

/** One model of each upstream protocol, from the catalog, all served by the simulator. */
export const PROTOCOL_MODELS = ["gpt-4o-mini", "claude-sonnet-4-5", "gemini-2.5-flash"] as const;

export function aiSdk(
  g: TestGateway,
  apiKey: string,
  opts: { headers?: Record<string, string>; extra?: Record<string, unknown> } = {},
) {
  const sent: any[] = [];
  const provider = createOpenAI({
    apiKey,
    baseURL: g.url + "/v1",
    headers: opts.headers,
    fetch: (async (url: string | URL | Request, init?: RequestInit) => {
      if (typeof init?.body === "string") {
        const body = { ...JSON.parse(init.body), ...opts.extra };
        sent.push(body);
        init = { ...init, body: JSON.stringify(body) };
      }
      return fetch(url, init);
    }) as typeof fetch,
  });
  return { provider, sent };
}

/** The item references of a Responses request body. */
export const references = (body: any): string[] =>
  Array.isArray(body?.input) ? body.input.filter((i: any) => i?.type === "item_reference").map((i: any) => i.id) : [];
