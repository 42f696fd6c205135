/**
 * The English message of every error code, sent when a request prefers English
 * (Accept-Language). Kept apart from the code table so a code added there without an
 * English message here fails the completeness test (test/http/sdk-errors.test.ts) instead of
 * silently answering in Korean.
 */
import type { ErrorCode } from "./errors";

export const ERROR_MESSAGES_EN: { readonly [K in ErrorCode]?: string } = {
  invalid_request: "The request is invalid.",
  model_not_found: "The model is not supported.",
  model_not_allowed: "This key cannot call this model.",
  unsupported_parameter: "This model does not support this combination of parameters.",
  byok_not_supported: "A BYOK key cannot serve this request.",
  policy_gate_disabled: "Routing policies are turned off.",
  policy_inactive: "The routing policy is inactive.",
  policy_not_found: "The routing policy was not found.",
  invalid_policy_entry: "This model cannot be a policy entry.",
  policy_cost_limit_exceeded: "No model can run within the policy's maximum cost per call.",
  unknown_plugin: "Unknown plugin.",
  reasoning_mode_unsupported: "This model does not support the pro reasoning mode.",
  provider_not_configured:
    "The provider is not configured on this deployment. The operator must set its credential before it can be called.",
  unauthorized: "Missing or invalid credentials.",
  insufficient_credits: "Insufficient credits. Top up and try again.",
  monthly_budget_exceeded: "The key's monthly budget is exceeded.",
  monthly_token_quota_exceeded: "The key's monthly token quota is exceeded.",
  org_member_monthly_budget_exceeded: "The team member's monthly budget is exceeded.",
  forbidden: "You are not allowed to do this.",
  ip_not_allowed: "This IP address is not allowed.",
  scope_required: "This key's scopes do not allow this call.",
  xborder_training_consent_required: "Separate consent is required for providers that train on data.",
  org_membership_required: "A valid team membership is required.",
  pii_masking_required: "Accounts in regulated industries cannot turn off PII masking.",
  charge_amount_not_allowed: "This key cannot use charge_amount_krw.",
  key_limit_exceeded: "The account has reached its limit of live keys.",
  not_found: "Not found.",
  request_timeout: "The request body did not arrive in time.",
  conflict: "It already exists or is being processed.",
  idempotency_in_progress: "A request with the same Idempotency-Key is being processed.",
  job_not_ready: "The job is still generating.",
  request_id_reused: "This X-Request-Id was already used. Send a new id with each request.",
  content_expired: "The result file is past its retention period.",
  payload_too_large: "The request body is too large.",
  unsupported_media_type: "Unsupported media type.",
  range_not_satisfiable: "The requested byte range cannot be served.",
  idempotency_key_reused: "The same Idempotency-Key was used with a different request body.",
  rate_limited: "Rate limit exceeded. Try again shortly.",
  upstream_rate_limited: "All upstreams have reached their rate limits.",
  concurrency_limit_exceeded: "Too many requests in progress. Try again when one finishes.",
  not_implemented: "Not supported.",
  upstream_unavailable: "The upstream provider is temporarily not responding.",
  upstream_request_rejected: "The upstream provider rejected the request.",
  catalog_snapshot_stale: "The model catalog cannot be verified. Try again shortly.",
  limiter_unavailable: "Rate limits cannot be checked right now.",
  service_unavailable: "The service is temporarily unavailable.",
  byok_encryption_unavailable: "The BYOK credential encryption key (BYOK_ENCRYPTION_KEY) is missing or wrong.",
  internal_error: "An internal error occurred.",
};
