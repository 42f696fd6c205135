/**
 * Earlier turns of a Responses conversation: `previous_response_id` and `item_reference`
 * input items resolved against stored responses (RESPONSES_STORE=on), before any credit is
 * held. With storage off `previous_response_id` is accepted and ignored, as the
 * specification says, but an `item_reference` cannot be answered (the item it names was never
 * kept): it is 400 with what to do instead. An id that is unknown, expired or another
 * account's is 404 alike.
 */
import { FIELD_REQUIRED, GatewayError, invalid, text } from "../../core/errors";
import type { InputItem, ResponsesBody } from "./schema";

/** What the conversation store answers, for one account. */
export interface ResponseHistory {
  /** The context and output of a stored response; null when unknown. */
  chain(id: string): Promise<{ context: unknown[]; output: unknown[] } | null>;
  /** Stored output items by id (unknown ids are missing from the map). */
  items(ids: string[]): Promise<Map<string, unknown>>;
}

export interface ResolvedInput {
  /** Items of the earlier turns (the previous response's context and output). */
  prior: InputItem[];
  /** The request's own items, item references replaced by what they name. */
  input: InputItem[];
  /** The previous response id that was followed, or null. */
  previousId: string | null;
}

const STORE_OFF = text(
  "item_reference 입력 항목은 저장된 응답을 가리키지만 이 게이트웨이는 응답을 저장하지 않습니다. 운영자가 RESPONSES_STORE=on으로 저장을 켜거나, 요청에 store: false를 보내 전체 항목을 보내세요(Vercel AI SDK: providerOptions.openai.store = false).",
  "item_reference input items point at stored responses, but this gateway does not store responses. Ask the operator to turn storage on (RESPONSES_STORE=on), or send store: false so the full items are sent instead (Vercel AI SDK: providerOptions.openai.store = false).",
);

/** 404 for an id that is unknown, expired or another account's (`param`: the field that named it). */
export function notStored(
  what: "response" | "item",
  id: string,
  param: string | null = what === "response" ? "previous_response_id" : "input",
): GatewayError {
  const extras = param ? { param } : {};
  return what === "response"
    ? new GatewayError("not_found", text(`응답 '${id}'을(를) 찾을 수 없습니다.`, `Response '${id}' not found.`), extras)
    : new GatewayError(
        "not_found",
        text(`입력 항목 '${id}'을(를) 찾을 수 없습니다.`, `Input item '${id}' not found.`),
        extras,
      );
}

export async function resolveInput(body: ResponsesBody, history: ResponseHistory | null): Promise<ResolvedInput> {
  const own: InputItem[] =
    typeof body.input === "string" ? [{ type: "message", role: "user", content: body.input }] : body.input;
  const refs = own.flatMap((item, i) => (item.type === "item_reference" ? [{ i, id: item.id }] : []));
  for (const r of refs) {
    if (!history) throw new GatewayError("invalid_request", STORE_OFF, { param: `input[${r.i}]` });
    if (!r.id) throw invalid(["body", "input", r.i, "id"], FIELD_REQUIRED, "missing");
  }
  const prevId = history ? previousId(body.previous_response_id) : null;
  let prior: InputItem[] = [];
  if (history && prevId) {
    const prev = await history.chain(prevId);
    if (!prev) throw notStored("response", prevId);
    prior = [...prev.context, ...prev.output] as InputItem[];
  }
  if (!refs.length || !history) return { prior, input: own, previousId: prevId };
  const found = await history.items(refs.map((r) => r.id!));
  const input = own.map((item) => {
    if (item.type !== "item_reference") return item;
    const hit = found.get(item.id!);
    if (!hit) throw notStored("item", item.id!);
    return hit as InputItem;
  });
  return { prior, input, previousId: prevId };
}

function previousId(v: unknown): string | null {
  if (v === undefined) return null;
  if (typeof v !== "string" || !v)
    throw invalid(["body", "previous_response_id"], text("문자열이어야 합니다.", "Expected a string"), "string_type");
  return v;
}
