/**
 * Google's error envelope `{"error":{"code","message","status","details"?}}`, pretty-printed
 * with a trailing newline as the Gemini API sends it. A missing API key is 400
 * INVALID_ARGUMENT with reason API_KEY_INVALID (not 401), and a 429 carries its retry delay
 * in the body (`RetryInfo`) as well as `retry-after`.
 */

const STATUS: Record<number, [status: string, message: string]> = {
  400: ["INVALID_ARGUMENT", "Request contains an invalid argument."],
  401: ["UNAUTHENTICATED", "Request had invalid authentication credentials."],
  403: ["PERMISSION_DENIED", "The caller does not have permission."],
  404: ["NOT_FOUND", "Requested entity was not found."],
  409: ["ABORTED", "The operation was aborted."],
  422: ["INVALID_ARGUMENT", "Request contains an invalid argument."],
  429: ["RESOURCE_EXHAUSTED", "You exceeded your current quota, please check your plan and billing details."],
  500: [
    "INTERNAL",
    "An internal error has occurred. Please retry or report in https://developers.generativeai.google/guide/troubleshooting",
  ],
  502: ["UNAVAILABLE", "Bad gateway."],
  503: ["UNAVAILABLE", "The model is overloaded. Please try again later."],
  504: ["DEADLINE_EXCEEDED", "The request timed out. Please try again."],
  529: ["UNAVAILABLE", "The model is overloaded. Please try again later."],
};

const JSON_HEADERS = { "content-type": "application/json; charset=UTF-8" };

export function geminiError(status: number, message?: string, details?: object[]): Response {
  const [name, fallback] = STATUS[status] ?? [
    status >= 500 ? "INTERNAL" : "INVALID_ARGUMENT",
    `Simulated error ${status}.`,
  ];
  const error: Record<string, unknown> = { code: status, message: message ?? fallback, status: name };
  let headers: Record<string, string> = JSON_HEADERS;
  if (status === 429) {
    error.details = details ?? [
      {
        "@type": "type.googleapis.com/google.rpc.QuotaFailure",
        violations: [{ quotaId: "GenerateRequestsPerMinutePerProjectPerModel" }],
      },
      { "@type": "type.googleapis.com/google.rpc.RetryInfo", retryDelay: "1s" },
    ];
    headers = { ...JSON_HEADERS, "retry-after": "1" };
  } else if (details) {
    error.details = details;
  }
  return new Response(`${JSON.stringify({ error }, null, 2)}\n`, { status, headers });
}

const KEY_MESSAGE = "API key not valid. Please pass a valid API key.";

/** The key may come as `x-goog-api-key` or `?key=`; without one, Google's 400 API_KEY_INVALID. */
export function authenticateGemini(req: Request, url: URL): Response | undefined {
  if (req.headers.get("x-goog-api-key") || url.searchParams.get("key")) return undefined;
  return geminiError(400, KEY_MESSAGE, [
    {
      "@type": "type.googleapis.com/google.rpc.ErrorInfo",
      reason: "API_KEY_INVALID",
      domain: "googleapis.com",
      metadata: { service: "generativelanguage.googleapis.com" },
    },
    { "@type": "type.googleapis.com/google.rpc.LocalizedMessage", locale: "en-US", message: KEY_MESSAGE },
  ]);
}
