/**
 * What a route declares about its answers, for the OpenAPI document only: nothing here
 * validates a response (a schema check on the hot path costs time and could turn a valid
 * answer into a 500). A route writes `detail: { responses: { ...created(KeyRecord), ...errors(409) } }`;
 * src/http/openapi/document.ts adds the errors every route of its kind can answer.
 */
import { Type, type TSchema } from "@sinclair/typebox";

export { named, schemaName } from "../../lib/named-schema";

type Responses = Record<string, any>;
const json = (schema: unknown) => ({ "application/json": { schema } });

/** A JSON answer with this status. */
export const answer = (status: number, schema: TSchema, description: string): Responses => ({
  [status]: { description, content: json(schema) },
});
/** A non-JSON answer, e.g. `answerAs(200, "text/plain", { type: "string" }, "Metrics")`. */
export const answerAs = (status: number, mediaType: string, schema: object, description: string): Responses => ({
  [status]: { description, content: { [mediaType]: { schema } } },
});
export const ok = (schema: TSchema, description = "OK") => answer(200, schema, description);
export const created = (schema: TSchema, description = "Created") => answer(201, schema, description);
export const noContent = (description = "No content"): Responses => ({ 204: { description } });
export const accepted = (schema: TSchema, description = "Accepted") => answer(202, schema, description);

/** A JSON answer, or with `stream: true` a server-sent event stream. */
export function okOrStream(schema: TSchema, streamDescription: string): Responses {
  return {
    200: {
      description: `The answer as JSON, or with \`stream: true\` a server-sent event stream (${streamDescription})`,
      content: { ...json(schema), "text/event-stream": { schema: Type.String({ description: streamDescription }) } },
    },
  };
}

/** Response headers, defined once as components (`#/components/headers/<name>`). */
export const HEADERS = {
  "X-Request-Id": {
    description: "The request's id (the client's own X-Request-Id when it sent a valid one)",
    schema: { type: "string" },
  },
  "X-RateLimit-Limit": { description: "Requests per minute allowed for this key", schema: { type: "integer" } },
  "X-RateLimit-Remaining": { description: "Requests left in the current minute", schema: { type: "integer" } },
  "X-RateLimit-Reset": { description: "Seconds until the window resets", schema: { type: "integer" } },
  "X-Cost-KRW": { description: "What the call cost, in KRW (0 for a cache hit)", schema: { type: "string" } },
  "X-Cost-USD": { description: "What the call cost, in USD", schema: { type: "string" } },
  "X-Policy-Decision": { description: "What the routing policy chose, when one applied", schema: { type: "string" } },
  "X-Gateway-Warnings": {
    description:
      "Request settings the answering provider could not be sent, when any: `unsupported-setting=<parameter>; provider=<id>`, comma-separated",
    schema: { type: "string" },
  },
  Deprecation: {
    description:
      "RFC 9745: the answering model is deprecated, since this day (`@<Unix seconds>`); the first `x-gateway-warnings` entry is then `deprecated-model=<id>; retires=<day>; successor=<id>`",
    schema: { type: "string" },
  },
  Sunset: {
    description: "RFC 8594: the day the answering model retires; from then on it is refused (400 `model_retired`)",
    schema: { type: "string" },
  },
  Link: {
    description: 'The deprecated model\'s successor: `</v1/models/<id>>; rel="successor-version"`',
    schema: { type: "string" },
  },
  "X-Token-Count-Source": {
    description: "Who counted the tokens: a provider id (its own count) or `estimate` (the gateway's)",
    schema: { type: "string" },
  },
  "X-Response-Stored": {
    description:
      "RESPONSES_STORE=on: the response was answered but not kept, and why: `false; reason=response_too_large` or `false; reason=account_quota` (absent when kept or not asked to be)",
    schema: { type: "string" },
  },
  Location: { description: "The job's URL", schema: { type: "string" } },
  "Idempotent-Replayed": {
    description: "`true` when this is the stored answer to an earlier request with the same Idempotency-Key",
    schema: { type: "string" },
  },
  "Content-Range": { description: "The bytes sent, `bytes start-end/size`", schema: { type: "string" } },
  "Retry-After": { description: "Seconds to wait before retrying", schema: { type: "integer" } },
} as const;
export type HeaderName = keyof typeof HEADERS;

/** Adds header references to every success answer in `responses`. */
export function withHeaders(responses: Responses, ...names: HeaderName[]): Responses {
  const refs = Object.fromEntries(names.map((n) => [n, { $ref: `#/components/headers/${n}` }]));
  return Object.fromEntries(
    Object.entries(responses).map(([status, r]) => [
      status,
      status.startsWith("2") && !("$ref" in r) ? { ...r, headers: { ...r.headers, ...refs } } : r,
    ]),
  );
}

/**
 * The error answers in the specification's three body shapes, defined once as components.
 * `shape` names the body: `detail` is `{detail: {error, message, ...}}`, `envelope` the
 * compatible `{error: {message, type}}`, `validation` the 422 list `{detail: [{loc, msg, type}]}`.
 */
export const ERROR_RESPONSES = {
  400: {
    name: "BadRequest",
    shapes: ["detail", "envelope"],
    description:
      "Invalid request: `invalid_request` (compatible envelope) or a structured code such as `model_not_found` or `model_retired`",
  },
  401: { name: "Unauthorized", shapes: ["detail"], description: "Missing or invalid credential (`unauthorized`)" },
  402: {
    name: "PaymentRequired",
    shapes: ["detail"],
    description: "Credits or a budget exhausted (`insufficient_credits`, `monthly_budget_exceeded`, ...)",
  },
  403: {
    name: "Forbidden",
    shapes: ["detail"],
    description: "Authenticated but not allowed (`forbidden`, `scope_required`, `ip_not_allowed`, ...)",
  },
  404: { name: "NotFound", shapes: ["envelope"], description: "No such resource, or not yours (`not_found`)" },
  409: {
    name: "Conflict",
    shapes: ["detail"],
    description: "Conflicts with the current state (`conflict`, `job_not_ready`, ...)",
  },
  410: { name: "Gone", shapes: ["detail"], description: "The result is no longer kept (`content_expired`)" },
  413: {
    name: "PayloadTooLarge",
    shapes: ["envelope"],
    description: "The body is over MAX_BODY_BYTES (`payload_too_large`)",
  },
  416: {
    name: "RangeNotSatisfiable",
    shapes: ["envelope"],
    description: "The Range is outside the file (`range_not_satisfiable`)",
  },
  422: {
    name: "ValidationFailed",
    shapes: ["validation", "detail"],
    description: "The body, query or a path parameter failed validation (a `loc` names the field)",
  },
  429: {
    name: "TooManyRequests",
    shapes: ["detail"],
    description: "A rate or concurrency limit (`rate_limited`, `concurrency_limit_exceeded`, ...); see Retry-After",
  },
  501: { name: "NotImplemented", shapes: ["envelope"], description: "Not offered (`not_implemented`)" },
  502: {
    name: "BadGateway",
    shapes: ["detail"],
    description: "Every upstream failed (`upstream_unavailable`, `upstream_request_rejected`)",
  },
  503: {
    name: "ServiceUnavailable",
    shapes: ["detail", "envelope"],
    description: "Temporarily unavailable (database, catalog, limiter); retry later",
  },
} as const;

export type ErrorStatus = keyof typeof ERROR_RESPONSES;

/** References to the shared error answers, e.g. `errors(402, 502)`. */
export const errors = (...statuses: ErrorStatus[]): Responses =>
  Object.fromEntries(statuses.map((s) => [s, { $ref: `#/components/responses/${ERROR_RESPONSES[s].name}` }]));
