/**
 * What a provider's failure means, in our words. A vendor's error body can name its account,
 * organization, project, key prefix or internal ids (OpenAI's rate-limit messages name the
 * organization): it goes to the operator's log, never to a client. Clients get the provider's
 * HTTP status, a reason code and a Korean sentence for that reason.
 */
import { log } from "../../lib/log";
import type { Lang } from "../errors";
import { UpstreamError, type UpstreamReason } from "./error";

const WORDS: Record<UpstreamReason, string> = {
  invalid_request: "제공자가 요청의 형식이나 파라미터를 받아들이지 않았습니다.",
  context_length: "입력과 출력 토큰 수가 모델의 컨텍스트 길이를 넘었습니다.",
  content_policy: "제공자의 콘텐츠 정책에 따라 요청이 거부되었습니다.",
  auth: "게이트웨이가 제공자 인증에 실패했습니다.",
  quota: "제공자 측 사용 한도가 소진되었습니다.",
  not_found: "제공자가 요청한 모델이나 리소스를 찾지 못했습니다.",
  too_large: "요청이 제공자의 크기 제한을 넘었습니다.",
  rate_limited: "제공자가 요청 한도에 도달했습니다.",
  overloaded: "제공자가 과부하 상태입니다.",
  server_error: "제공자에서 일시적인 오류가 발생했습니다.",
  timeout: "제공자가 제한 시간 안에 응답하지 않았습니다.",
  truncated: "제공자의 응답 스트림이 중간에 끊겼습니다.",
  connection: "제공자에 연결하지 못했습니다.",
  bad_answer: "제공자의 응답을 처리하지 못했습니다.",
};

const WORDS_EN: Record<UpstreamReason, string> = {
  invalid_request: "The provider did not accept the request's format or parameters.",
  context_length: "Input and output tokens exceed the model's context length.",
  content_policy: "The provider refused the request under its content policy.",
  auth: "The gateway failed to authenticate with the provider.",
  quota: "The provider's usage quota is exhausted.",
  not_found: "The provider did not find the requested model or resource.",
  too_large: "The request exceeds the provider's size limit.",
  rate_limited: "The provider reached its rate limit.",
  overloaded: "The provider is overloaded.",
  server_error: "A temporary error occurred at the provider.",
  timeout: "The provider did not respond in time.",
  truncated: "The provider's response stream broke off.",
  connection: "Could not connect to the provider.",
  bad_answer: "The provider's response could not be processed.",
};

/** Our words for a reason, in a language (an unknown reason: the generic failure). */
export function upstreamWords(reason: string, lang: Lang): string {
  const table = lang === "en" ? WORDS_EN : WORDS;
  return table[reason as UpstreamReason] ?? (lang === "en" ? UNPROCESSED.en : UNPROCESSED.ko);
}

const UNPROCESSED = {
  ko: "제공자의 응답을 처리하지 못했습니다.",
  en: "The provider's response could not be processed.",
};

/** The reason the vendor's error gave, else the one its kind and status imply. */
export function upstreamReason(e: UpstreamError): UpstreamReason {
  if (e.reason) return e.reason;
  switch (e.kind) {
    case "timeout":
    case "truncated":
    case "rate_limited":
      return e.kind;
    case "transient":
      if (e.status === undefined) return "connection";
      return e.status === 503 || e.status === 529 ? "overloaded" : "server_error";
    case "rejected":
      if (e.status === 401 || e.status === 403) return "auth";
      if (e.status === 404) return "not_found";
      if (e.status === 413) return "too_large";
      if (e.status === 402 || e.status === 429) return "quota";
      return "invalid_request";
  }
}

/** The `upstream` object of a 502 `upstream_request_rejected`: the status, the reason, our words. */
export function upstreamSummary(e: UpstreamError): { status: number; reason: UpstreamReason; detail: string } {
  const reason = upstreamReason(e);
  return { status: e.status ?? 400, reason, detail: WORDS[reason] };
}

/** The client's words for any failure of an upstream call (a stream's last event, a job's error). */
export function failureWords(err: unknown, lang: Lang = "ko"): string {
  return err instanceof UpstreamError ? upstreamWords(upstreamReason(err), lang) : UNPROCESSED[lang];
}

/** What the provider actually said, for the operator (with the ids that find the request). */
export function logUpstreamFailure(err: unknown, fields: Record<string, unknown>): void {
  if (err instanceof UpstreamError) {
    log.warn("upstream call failed", {
      ...fields,
      kind: err.kind,
      status: err.status,
      reason: upstreamReason(err),
      message: err.message,
      detail: err.detail,
    });
  } else {
    log.warn("upstream call failed", { ...fields, error: err });
  }
}
