/**
 * Response ids. A response id is the gateway's request id (a UUID, also the hold and usage
 * event id) in OpenAI's shape, `resp_<32 hex>`, so it maps back to the request without any
 * lookup table: the feedback endpoint takes either form.
 */
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const HEX_ID = /^(?:resp_|chatcmpl-)([0-9a-f]{32})$/i;

export function responseId(requestId: string): string {
  return `resp_${requestId.replace(/-/g, "")}`;
}

/** The request UUID behind a path id: a UUID, `resp_<hex>` or `chatcmpl-<hex>`; null otherwise. */
export function requestIdFromPath(id: string): string | null {
  if (UUID.test(id)) return id.toLowerCase();
  const m = HEX_ID.exec(id);
  if (!m) return null;
  const h = m[1]!.toLowerCase();
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

/** An output item id: a prefix and 32 random hex digits, as OpenAI's look. */
export function itemId(prefix: "msg" | "fc"): string {
  return `${prefix}_${crypto.randomUUID().replace(/-/g, "")}`;
}
