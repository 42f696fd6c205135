/** Shared pieces of the Responses tests: tenants, raw SSE reading, an upstream recorder. */
import OpenAI from "openai";
import type { TestGateway } from "../harness";
import { RecordingProxy } from "../support/chat";
import { requestIdFromPath } from "../../src/surfaces/responses/ids";

export async function tenant(g: TestGateway, creditKrw = 1000, keyBody: Record<string, unknown> = {}) {
  const user = await g.newUser({ creditKrw });
  const key = await g.newKey(user, keyBody);
  const sdk = new OpenAI({ apiKey: key.key, baseURL: g.url + "/v1", maxRetries: 0 });
  return { user, key, sdk };
}

export interface SseFrame {
  event: string | null;
  data: string;
  json: any;
}

/** Splits an SSE body into frames (comments skipped), keeping the `event:` line. */
export function parseSse(text: string): SseFrame[] {
  const frames: SseFrame[] = [];
  for (const block of text.split("\n\n")) {
    let event: string | null = null;
    const data: string[] = [];
    for (const line of block.split("\n")) {
      if (line.startsWith("event: ")) event = line.slice(7);
      else if (line.startsWith("data: ")) data.push(line.slice(6));
    }
    if (!data.length) continue;
    const d = data.join("\n");
    let json: any = null;
    try {
      json = JSON.parse(d);
    } catch {}
    frames.push({ event, data: d, json });
  }
  return frames;
}

export async function postResponses(
  g: TestGateway,
  token: string,
  body: Record<string, unknown>,
  headers: Record<string, string> = {},
) {
  return fetch(g.url + "/v1/responses", {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
  });
}

export async function streamFrames(g: TestGateway, token: string, body: Record<string, unknown>) {
  const res = await postResponses(g, token, { ...body, stream: true });
  const text = await res.text();
  return { res, text, frames: parseSse(text) };
}

/** The usage event (and hold) of a response id, once the gateway has written it. */
export async function usageOf(g: TestGateway, responseId: string) {
  const rid = requestIdFromPath(responseId)!;
  for (let i = 0; i < 100; i++) {
    const rows = await g.gw.deps.db.query<any>(
      `select e.status, e.model, e.provider, e.prompt_tokens, e.completion_tokens, e.cost_micro, e.cached, h.status as hold_status, h.charged_micro
         from usage_events e left join holds h on h.id = e.request_id where e.request_id = $1`,
      [rid],
    );
    if (rows[0])
      return {
        ...rows[0],
        cost_micro: BigInt(rows[0].cost_micro),
        charged_micro: rows[0].charged_micro == null ? null : BigInt(rows[0].charged_micro),
      };
    await Bun.sleep(20);
  }
  throw new Error(`no usage event for ${responseId}`);
}

/** The chat tests' recording proxy, with the Responses tests' shorthand for the last body. */
export class UpstreamRecorder extends RecordingProxy {
  get calls() {
    return this.bodies;
  }
  last(): any {
    return this.bodies[this.bodies.length - 1]?.body;
  }
}
