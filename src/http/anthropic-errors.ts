/**
 * The Messages dialect's errors: every error the gateway renders for `/v1/messages` (the body
 * gate's 401, a 422, a 402 from the ledger, ...) is rewritten into Anthropic's envelope with its
 * status and headers kept, so the Anthropic SDK raises its own error classes.
 */
import { anthropicErrorBody, anthropicErrorType } from "../surfaces/anthropic/errors";

export function isMessagesPath(request: Request): boolean {
  const path = new URL(request.url).pathname;
  return path === "/v1/messages" || path.startsWith("/v1/messages/");
}

export async function asAnthropicError(res: Response, requestId: string): Promise<Response> {
  let body: any = null;
  try {
    body = JSON.parse(await res.text());
  } catch {}
  const e = body?.error ?? {};
  const retryable = body?.detail && !Array.isArray(body.detail) ? body.detail.retryable : undefined;
  const type = anthropicErrorType(res.status, retryable, e.code);
  const out = anthropicErrorBody(
    type,
    typeof e.message === "string" ? e.message : "",
    typeof e.code === "string" ? e.code : undefined,
    requestId,
  );
  return new Response(JSON.stringify(out), { status: res.status, headers: res.headers });
}
