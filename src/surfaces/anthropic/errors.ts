/**
 * Errors in Anthropic's shape, `{type: "error", error: {type, message}}`, with the gateway's own
 * status codes: the type follows the status as Anthropic's does (plus 402 → `billing_error`),
 * so the Anthropic SDK raises its matching error class and Claude Code retries what it should.
 * `error.code` adds the gateway's error code (SDKs keep unknown fields).
 */
import { ANTHROPIC_ERROR_TYPES, type AnthropicError, type AnthropicErrorType } from "./schemas";

export { ANTHROPIC_ERROR_TYPES, type AnthropicErrorType };

const enc = new TextEncoder();

/**
 * A retryable 503 (the gateway or its database busy) reads as Anthropic's "overloaded"; an
 * unknown model (our 400 `model_not_found`) and a retired one (`model_retired`, as Anthropic
 * answers for a model it no longer serves) as Anthropic's `not_found_error`, status kept.
 */
export function anthropicErrorType(status: number, retryable?: boolean, code?: string): AnthropicErrorType {
  if (code === "model_not_found" || code === "model_retired") return "not_found_error";
  if (status === 401) return "authentication_error";
  if (status === 402) return "billing_error";
  if (status === 403) return "permission_error";
  if (status === 404) return "not_found_error";
  if (status === 413) return "request_too_large";
  if (status === 429) return "rate_limit_error";
  if (status === 503 && retryable) return "overloaded_error";
  if (status >= 500) return "api_error";
  return "invalid_request_error";
}

export function anthropicErrorBody(
  type: AnthropicErrorType,
  message: string,
  code?: string,
  requestId?: string,
): AnthropicError {
  return {
    type: "error",
    error: { type, message, ...(code && { code }) },
    ...(requestId && { request_id: requestId }),
  };
}

/** A stream's failure after its first byte: Anthropic's `error` event, the stream's last. */
export function errorEvent(
  message: string,
  type: AnthropicErrorType = "api_error",
  code = "upstream_error",
): Uint8Array {
  return enc.encode(`event: error\ndata: ${JSON.stringify(anthropicErrorBody(type, message, code))}\n\n`);
}
