/**
 * OpenAI's error envelope `{"error":{"message","type","param","code"}}`, pretty-printed
 * as the API sends it, with the type/code pairs of the recorded errors. DeepSeek, Together
 * and Groq answer in the same envelope.
 */

interface OpenAIErrorKind {
  type: string;
  code: string | null;
  message: string;
}

const KINDS: Record<number, OpenAIErrorKind> = {
  400: { type: "invalid_request_error", code: null, message: "Invalid request (simulated)." },
  401: {
    type: "invalid_request_error",
    code: "invalid_api_key",
    message: "Incorrect API key provided. You can find your API key at https://platform.openai.com/account/api-keys.",
  },
  403: {
    type: "invalid_request_error",
    code: "unsupported_country_region_territory",
    message: "Country, region, or territory not supported.",
  },
  404: {
    type: "invalid_request_error",
    code: "model_not_found",
    message: "The model does not exist or you do not have access to it.",
  },
  422: { type: "invalid_request_error", code: null, message: "Unprocessable request (simulated)." },
  429: {
    type: "requests",
    code: "rate_limit_exceeded",
    message: "Rate limit reached for requests per min (RPM): Limit 500, Used 500, Requested 1. Please try again in 1s.",
  },
  500: {
    type: "server_error",
    code: null,
    message: "The server had an error while processing your request. Sorry about that!",
  },
  502: { type: "server_error", code: null, message: "Bad gateway." },
  503: {
    type: "service_unavailable_error",
    code: "server_is_overloaded",
    message: "Our servers are currently overloaded. Please try again later.",
  },
};

/** Overrides for one error: `code: null` as for a missing key, `param` for a bad field. */
export interface OpenAIErrorDetail {
  param?: string | null;
  code?: string | null;
}

export function openAIError(status: number, message?: string, detail: OpenAIErrorDetail = {}): Response {
  const kind = KINDS[status] ?? {
    type: status >= 500 ? "server_error" : "invalid_request_error",
    code: null,
    message: `Simulated error ${status}.`,
  };
  const body = {
    error: {
      message: message ?? kind.message,
      type: kind.type,
      param: detail.param ?? null,
      code: detail.code === undefined ? kind.code : detail.code,
    },
  };
  const headers: Record<string, string> = {
    "content-type": "application/json",
    "x-request-id": `req_sim${crypto.randomUUID().replaceAll("-", "")}`,
  };
  if (status === 429) {
    headers["retry-after"] = "1";
    headers["x-ratelimit-limit-requests"] = "500";
    headers["x-ratelimit-remaining-requests"] = "0";
    headers["x-ratelimit-reset-requests"] = "1s";
  }
  return new Response(`${JSON.stringify(body, null, 2)}\n`, { status, headers });
}

/** Missing `Authorization: Bearer …`: OpenAI's 401 for a request without a key. */
export function authenticateOpenAI(req: Request): Response | undefined {
  const auth = req.headers.get("authorization");
  if (auth && /^Bearer\s+\S/i.test(auth)) return undefined;
  return openAIError(
    401,
    "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY).",
    { code: null },
  );
}
