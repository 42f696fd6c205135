/**
 * Anthropic's error envelope `{"type":"error","error":{"type","message"},"request_id"}`
 * with the documented status → type mapping (529 `overloaded_error`, 429
 * `rate_limit_error` with `retry-after`), and the credential checks of the Messages API.
 */

const TYPES: Record<number, [type: string, message: string]> = {
  400: ["invalid_request_error", "Invalid request (simulated)."],
  401: ["authentication_error", "invalid x-api-key"],
  402: ["billing_error", "Your credit balance is too low to access the Anthropic API."],
  403: ["permission_error", "Your API key does not have permission to use the specified resource."],
  404: ["not_found_error", "The requested resource could not be found."],
  413: ["request_too_large", "Request exceeds the maximum allowed number of bytes."],
  422: ["invalid_request_error", "Unprocessable request (simulated)."],
  429: ["rate_limit_error", "This request would exceed the rate limit for your organization. Please try again later."],
  500: ["api_error", "Internal server error"],
  502: ["api_error", "Bad gateway"],
  503: ["api_error", "Service unavailable"],
  504: ["timeout_error", "Request timed out"],
  529: ["overloaded_error", "Overloaded"],
};

export function anthropicError(status: number, message?: string): Response {
  const [type, fallback] = TYPES[status] ?? [
    status >= 500 ? "api_error" : "invalid_request_error",
    `Simulated error ${status}.`,
  ];
  const requestId = `req_011SIM${crypto.randomUUID().replaceAll("-", "").slice(0, 18)}`;
  const headers: Record<string, string> = { "content-type": "application/json", "request-id": requestId };
  if (status === 429) headers["retry-after"] = "1";
  // Anthropic marks its transient errors for the SDKs' retry logic.
  if (status >= 500 || status === 429) headers["x-should-retry"] = "true";
  const body = { type: "error", error: { type, message: message ?? fallback }, request_id: requestId };
  return new Response(JSON.stringify(body), { status, headers });
}

/** `x-api-key` is required (401), then `anthropic-version` (400), as the real API checks. */
export function authenticateAnthropic(req: Request): Response | undefined {
  if (!req.headers.get("x-api-key")) return anthropicError(401, "x-api-key header is required");
  if (!req.headers.get("anthropic-version")) return anthropicError(400, "anthropic-version: header is required");
  return undefined;
}
