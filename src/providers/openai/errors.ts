/** OpenAI-compatible error envelopes → UpstreamError. */
import { UpstreamError, type UpstreamErrorKind, type UpstreamReason } from "../../core/upstream/error";
import { upstreamHttpError } from "../common/errors";
import type { OpenAIWireErrorBody } from "./wire";

/**
 * Classifies an HTTP error. Like the shared rule, except that a 429 whose error type or code is
 * `insufficient_quota` (billing exhausted, not a rate limit) is `rejected`.
 */
export function classifyOpenAIError(status: number, headers: Headers, bodyText: string): UpstreamError {
  return upstreamHttpError(status, headers, bodyText, {
    kind: (s, detail) => {
      const err = errorObject(detail);
      return s === 429 && (err?.code === "insufficient_quota" || err?.type === "insufficient_quota")
        ? "rejected"
        : undefined;
    },
    message: (detail, s) =>
      `upstream ${s}: ${errorObject(detail)?.message ?? (typeof detail === "string" ? detail.slice(0, 200) : "error")}`,
    reason: (detail) => openAIReason(errorObject(detail)),
  });
}

/** What OpenAI's error code says beyond its status (the rest follows the status). */
function openAIReason(err: ReturnType<typeof errorObject>): UpstreamReason | undefined {
  const tag = `${err?.code ?? ""} ${err?.type ?? ""}`;
  if (/context_length_exceeded|string_above_max_length/.test(tag)) return "context_length";
  if (/insufficient_quota|billing/.test(tag)) return "quota";
  if (/invalid_api_key|invalid_organization|invalid_project/.test(tag)) return "auth";
  if (/content_policy|content_filter/.test(tag)) return "content_policy";
  if (/model_not_found/.test(tag)) return "not_found";
  return undefined;
}

/**
 * An `error` payload inside a 200 stream. Server/overload errors are transient, rate limits
 * rate_limited, request errors rejected; anything unknown is transient.
 */
export function classifyOpenAIStreamError(payload: unknown): UpstreamError {
  const err = errorObject(payload);
  const tag = `${err?.type ?? ""} ${err?.code ?? ""}`;
  let kind: UpstreamErrorKind = "transient";
  if (/insufficient_quota/.test(tag)) kind = "rejected";
  else if (/rate_limit|tokens|requests/.test(tag)) kind = "rate_limited";
  else if (/invalid_request|context_length|invalid_api_key|permission|not_found/.test(tag)) kind = "rejected";
  return new UpstreamError(
    kind,
    `upstream stream error: ${err?.message ?? "unknown"}`,
    undefined,
    payload,
    undefined,
    openAIReason(err),
  );
}

function errorObject(
  detail: unknown,
): { message?: string; type?: string | null; code?: string | number | null } | undefined {
  if (typeof detail !== "object" || detail === null) return undefined;
  const e = (detail as OpenAIWireErrorBody).error;
  if (typeof e === "string") return { message: e };
  return e ?? undefined;
}
