/** The error code a request's log line and trace carry, as renderError (errors.ts) answered it. */
import { GatewayError } from "../core/errors";

export function errorCodeOf(code: unknown, error: unknown, status: number): string {
  if (error instanceof GatewayError) return error.errorCode;
  const cause = (error as { cause?: unknown } | null)?.cause;
  if (code === "PARSE" && cause instanceof GatewayError) return cause.errorCode;
  if (status === 422) return "validation_error";
  if (code === "NOT_FOUND") return "not_found";
  if (status === 400) return "invalid_request";
  if (status === 503) return "service_unavailable";
  return status >= 500 ? "internal_error" : `http_${status}`;
}
