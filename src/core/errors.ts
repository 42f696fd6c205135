/**
 * The one error type of the gateway. Handlers and use-cases throw it; one renderer at the
 * HTTP edge turns it into one of the specification's three body shapes. Codes are the API;
 * the message is for humans: Korean by default, English when the request prefers it
 * (English messages: ./error-messages-en.ts).
 */
import { ERROR_MESSAGES_EN } from "./error-messages-en";

/** Which of the specification's body shapes a code is rendered in. */
export type ErrorShape = "detail" | "envelope";

interface CodeSpec {
  status: number;
  shape: ErrorShape;
  /** Default Korean message. */
  message: string;
  retryable?: boolean;
}

/** The closed set of error codes: the specification's table plus our own. */
export const ERROR_CODES = {
  // 400
  invalid_request: { status: 400, shape: "envelope", message: "잘못된 요청입니다." },
  model_not_found: { status: 400, shape: "detail", message: "지원하지 않는 모델입니다." },
  /** A model past its catalog retirement date (docs/catalog.md, "Model lifecycle"): the message names its successor. */
  model_retired: { status: 400, shape: "detail", message: "지원이 종료된 모델입니다. 후속 모델을 사용하세요." },
  model_not_allowed: { status: 400, shape: "detail", message: "이 키로 호출할 수 없는 모델입니다." },
  unsupported_parameter: { status: 400, shape: "detail", message: "이 모델이 지원하지 않는 파라미터 조합입니다." },
  byok_not_supported: { status: 400, shape: "detail", message: "BYOK 키로는 이 요청을 처리할 수 없습니다." },
  policy_gate_disabled: { status: 400, shape: "detail", message: "라우팅 정책 기능이 꺼져 있습니다." },
  policy_inactive: { status: 400, shape: "detail", message: "비활성화된 라우팅 정책입니다." },
  policy_not_found: { status: 400, shape: "detail", message: "라우팅 정책을 찾을 수 없습니다." },
  invalid_policy_entry: { status: 400, shape: "detail", message: "정책 항목으로 사용할 수 없는 모델입니다." },
  policy_cost_limit_exceeded: {
    status: 400,
    shape: "detail",
    message: "정책의 호출당 최대 비용 안에서 실행할 수 있는 모델이 없습니다.",
  },
  unknown_plugin: { status: 400, shape: "detail", message: "알 수 없는 플러그인입니다." },
  reasoning_mode_unsupported: { status: 400, shape: "detail", message: "이 모델은 pro 추론 모드를 지원하지 않습니다." },
  // 401
  unauthorized: { status: 401, shape: "detail", message: "인증 정보가 없거나 올바르지 않습니다." },
  // 402
  insufficient_credits: { status: 402, shape: "detail", message: "크레딧이 부족합니다. 충전 후 다시 시도하세요." },
  monthly_budget_exceeded: { status: 402, shape: "detail", message: "키의 월 예산을 초과했습니다." },
  monthly_token_quota_exceeded: { status: 402, shape: "detail", message: "키의 월 토큰 한도를 초과했습니다." },
  org_member_monthly_budget_exceeded: { status: 402, shape: "detail", message: "팀 멤버의 월 예산을 초과했습니다." },
  // 403
  forbidden: { status: 403, shape: "detail", message: "이 작업을 수행할 권한이 없습니다." },
  ip_not_allowed: { status: 403, shape: "detail", message: "허용되지 않은 IP 주소입니다." },
  scope_required: { status: 403, shape: "detail", message: "이 키의 권한 범위로는 호출할 수 없습니다." },
  xborder_training_consent_required: {
    status: 403,
    shape: "detail",
    message: "학습 사용 제공자에 대한 별도 동의가 필요합니다.",
  },
  org_membership_required: { status: 403, shape: "detail", message: "유효한 팀 멤버십이 필요합니다." },
  pii_masking_required: { status: 403, shape: "detail", message: "규제 업종 계정은 개인정보 마스킹을 끌 수 없습니다." },
  // An account at MAX_KEYS_PER_ACCOUNT live API (or management) keys asks for one more.
  key_limit_exceeded: {
    status: 403,
    shape: "detail",
    message: "계정의 키 개수 한도에 도달했습니다.",
    retryable: false,
  },
  charge_amount_not_allowed: {
    status: 403,
    shape: "detail",
    message: "이 키는 charge_amount_krw를 사용할 수 없습니다.",
  },
  // 404
  not_found: { status: 404, shape: "envelope", message: "찾을 수 없습니다." },
  // 408: a body still arriving after BODY_READ_TIMEOUT_MS (not in the specification's table)
  request_timeout: { status: 408, shape: "envelope", message: "요청 본문이 제한 시간 안에 도착하지 않았습니다." },
  // A payment return or webhook that cannot be believed (docs/payments.md): nothing is credited.
  payment_unverified: {
    status: 400,
    shape: "detail",
    message: "결제 정보를 확인할 수 없습니다. 결제 제공자가 확인해 준 결제만 충전됩니다.",
    retryable: false,
  },
  // 409
  conflict: { status: 409, shape: "detail", message: "이미 존재하거나 처리 중입니다." },
  idempotency_in_progress: { status: 409, shape: "detail", message: "같은 Idempotency-Key 요청이 처리 중입니다." },
  job_not_ready: { status: 409, shape: "detail", message: "아직 생성 중인 작업입니다." },
  request_id_reused: {
    status: 409,
    shape: "detail",
    message: "이 X-Request-Id로 이미 요청했습니다. 요청마다 새 ID를 사용하세요.",
    retryable: false,
  },
  // 410
  content_expired: { status: 410, shape: "detail", message: "결과 파일의 보관 기간이 지났습니다." },
  // 413, 415
  payload_too_large: { status: 413, shape: "envelope", message: "요청 본문이 너무 큽니다." },
  unsupported_media_type: { status: 415, shape: "envelope", message: "지원하지 않는 미디어 형식입니다." },
  // 416: a Range outside the file (video /content)
  range_not_satisfiable: { status: 416, shape: "envelope", message: "요청한 바이트 범위를 제공할 수 없습니다." },
  // 422 (our structured ones; schema failures use the validation list)
  idempotency_key_reused: {
    status: 422,
    shape: "detail",
    message: "같은 Idempotency-Key가 다른 요청 본문과 함께 사용되었습니다.",
  },
  // 429
  rate_limited: {
    status: 429,
    shape: "detail",
    message: "요청 한도를 초과했습니다. 잠시 후 다시 시도하세요.",
    retryable: true,
  },
  upstream_rate_limited: {
    status: 429,
    shape: "detail",
    message: "모든 업스트림이 요청 한도에 도달했습니다.",
    retryable: true,
  },
  concurrency_limit_exceeded: {
    status: 429,
    shape: "detail",
    message: "동시에 처리 중인 요청이 한도에 도달했습니다. 진행 중인 요청이 끝난 뒤 다시 시도하세요.",
    retryable: true,
  },
  // 501
  not_implemented: { status: 501, shape: "envelope", message: "지원하지 않는 기능입니다." },
  // 502
  upstream_unavailable: {
    status: 502,
    shape: "detail",
    message: "업스트림 제공자가 일시적으로 응답하지 않습니다.",
    retryable: true,
  },
  upstream_request_rejected: {
    status: 502,
    shape: "detail",
    message: "업스트림 제공자가 요청을 거부했습니다.",
    retryable: false,
  },
  // 503
  catalog_snapshot_stale: {
    status: 503,
    shape: "detail",
    message: "모델 카탈로그를 확인할 수 없습니다. 잠시 후 다시 시도하세요.",
    retryable: true,
  },
  limiter_unavailable: {
    status: 503,
    shape: "envelope",
    message: "요청 한도 확인이 일시적으로 불가능합니다.",
    retryable: true,
  },
  service_unavailable: {
    status: 503,
    shape: "detail",
    message: "서비스를 일시적으로 사용할 수 없습니다.",
    retryable: true,
  },
  // A provider without a credential outside demo mode (and without SIMULATOR=on): never simulated, never charged.
  provider_not_configured: {
    status: 503,
    shape: "detail",
    message: "이 배포에 설정되지 않은 제공자입니다. 운영자가 자격 증명을 설정해야 호출할 수 있습니다.",
    retryable: false,
  },
  // BYOK credentials are sealed at rest; without the right BYOK_ENCRYPTION_KEY none is stored or opened.
  byok_encryption_unavailable: {
    status: 503,
    shape: "detail",
    message: "BYOK 자격 증명 암호화 키(BYOK_ENCRYPTION_KEY)가 없거나 맞지 않습니다.",
    retryable: false,
  },
  // No payment provider on this deployment (PAYMENTS_PROVIDER): top-ups are the operator's.
  payments_not_configured: {
    status: 503,
    shape: "detail",
    message: "이 배포에서는 셀프 충전을 사용할 수 없습니다. 운영자에게 충전을 요청하세요.",
    retryable: false,
  },
  // The payment provider could not be reached or answered unexpectedly; nothing was credited.
  payment_provider_unavailable: {
    status: 502,
    shape: "detail",
    message: "결제 제공자가 일시적으로 응답하지 않습니다. 잠시 후 다시 시도하세요.",
    retryable: true,
  },
  // 500: never caused by a client; rendered without internals.
  internal_error: { status: 500, shape: "envelope", message: "내부 오류가 발생했습니다." },
} as const satisfies Record<string, CodeSpec>;

export type ErrorCode = keyof typeof ERROR_CODES;

/** The languages messages are written in; Korean is the default. */
export type Lang = "ko" | "en";

/** One message in both languages (a thrown error's specifics, said twice). */
export interface Text {
  ko: string;
  en: string;
}

export const text = (ko: string, en: string): Text => ({ ko, en });

/** The message of a missing field, as the request schemas word it. */
export const FIELD_REQUIRED = text("필수 항목입니다.", "Field required");

/** The table's English message for a code; the Korean one if a code was added without it. */
export function englishMessage(code: ErrorCode): string {
  return ERROR_MESSAGES_EN[code] ?? ERROR_CODES[code].message;
}

export interface ErrorExtras {
  action?: { type: string; path: string };
  retryable?: boolean;
  providers?: unknown[];
  /** A provider's refusal: its status, what it means (`reason`) and our words for it, never its body. */
  upstream?: { status: number; reason: string; detail: string };
  suggestions?: string[];
  /** Seconds, sent as the Retry-After header. */
  retryAfter?: number;
  /** Extra response headers (rate-limit counters and the like). */
  headers?: Record<string, string>;
  /** The request field at fault, as OpenAI's `error.param` (e.g. `max_tokens`). */
  param?: string;
}

export class GatewayError extends Error {
  readonly status: number;
  readonly shape: ErrorShape;
  /** `message` (always Korean, as logged) in English. */
  readonly messageEn: string;
  /**
   * `message`: a Korean string alone (English falls back to the code's table message) or a
   * {@link Text} with both, which a message naming specifics should be.
   */
  constructor(
    readonly errorCode: ErrorCode,
    message?: string | Text,
    readonly extras: ErrorExtras = {},
  ) {
    const spec: CodeSpec = ERROR_CODES[errorCode];
    super(typeof message === "object" ? message.ko : (message ?? spec.message));
    this.messageEn = typeof message === "object" ? message.en : englishMessage(errorCode);
    this.status = spec.status;
    this.shape = spec.shape;
    if (extras.retryable === undefined && spec.retryable !== undefined) {
      this.extras = { ...extras, retryable: spec.retryable };
    }
  }

  messageIn(lang: Lang): string {
    return lang === "en" ? this.messageEn : this.message;
  }
}

/** One field failure in the 422 list. */
export interface ValidationIssue {
  loc: (string | number)[];
  /** Korean (the default language). */
  msg: string;
  type: string;
  /** `msg` in English; not sent as a field of its own. */
  en?: string;
}

/** A schema failure found by our own code (not by Elysia's validator): rendered as the 422 list. */
export class ValidationFailure extends Error {
  constructor(readonly issues: ValidationIssue[]) {
    super(issues.map((i) => `${i.loc.join(".")}: ${i.msg}`).join("; "));
  }
}

/**
 * One 422 issue; `msg` in both languages. A bare string is taken as English (as these were
 * before they had Korean) and gets a generic Korean sentence around it.
 */
export function issue(loc: (string | number)[], msg: Text | string, type = "value_error"): ValidationIssue {
  const t = typeof msg === "string" ? { ko: `값이 올바르지 않습니다 (${msg}).`, en: msg } : msg;
  return { loc, msg: t.ko, type, en: t.en };
}

export function invalid(loc: (string | number)[], msg: Text | string, type = "value_error"): ValidationFailure {
  return new ValidationFailure([issue(loc, msg, type)]);
}
