/** Shared pieces of the Messages (Anthropic dialect) tests: tenants with an SDK client, raw SSE, the books. */
import Anthropic from "@anthropic-ai/sdk";
import type { TestGateway } from "../harness";

export const MODELS = ["claude-haiku-4-5", "gpt-4o-mini", "gemini-2.5-flash"] as const;

export async function tenant(g: TestGateway, creditKrw = 1000, keyBody: Record<string, unknown> = {}) {
  const user = await g.newUser({ creditKrw });
  const key = await g.newKey(user, keyBody);
  const sdk = new Anthropic({ apiKey: key.key, baseURL: g.url, maxRetries: 0 });
  return { user, key, sdk };
}

export interface Frame {
  event: string | null;
  json: any;
}

/** Splits an SSE body into frames (comments skipped), keeping the `event:` line. */
export function parseSse(text: string): Frame[] {
  const frames: Frame[] = [];
  for (const block of text.split("\n\n")) {
    let event: string | null = null;
    const data: string[] = [];
    for (const line of block.split("\n")) {
      if (line.startsWith("event: ")) event = line.slice(7);
      else if (line.startsWith("data: ")) data.push(line.slice(6));
    }
    if (!data.length) continue;
    let json: any = null;
    try {
      json = JSON.parse(data.join("\n"));
    } catch {}
    frames.push({ event, json });
  }
  return frames;
}

export function postMessages(g: TestGateway, key: string, body: Record<string, unknown>, path = "/v1/messages") {
  return fetch(g.url + path, {
    method: "POST",
    headers: { "x-api-key": key, "anthropic-version": "2023-06-01", "content-type": "application/json" },
    body: JSON.stringify(body),
  });
}

/** The request id behind a `msg_<32 hex>` id. */
export function requestIdOf(messageId: string): string {
  const h = messageId.replace(/^msg_/, "");
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

/** The account's books: balance, held, holds by status, charges and usage events (settles landed first). */
export async function books(g: TestGateway, userId: string) {
  await g.gw.settlements.quiesce();
  const db = g.gw.deps.db;
  const [u] = await db.query<any>(`select balance_micro, held_micro from users where id = $1`, [userId]);
  const holds = await db.query<any>(`select id, status, charged_micro from holds where user_id = $1`, [userId]);
  const charges = await db.query<any>(
    `select amount_micro, request_id from ledger_entries where user_id = $1 and kind = 'charge'`,
    [userId],
  );
  const events = await db.query<any>(
    `select request_id, status, model, provider, cost_micro, prompt_tokens, completion_tokens, api from usage_events where user_id = $1`,
    [userId],
  );
  return { balance: BigInt(u.balance_micro), held: BigInt(u.held_micro), holds, charges, events };
}
