/**
 * The gateway's error bodies in the OpenAI dialect (every route but the Messages ones), declared
 * once: the specification's three shapes, each carrying OpenAI's error object at the top level,
 * `error: {message, type, code, param}`, which the openai SDK, LangChain and the Vercel AI SDK
 * read. The renderer (src/http/errors.ts) returns `Static<>` of these; the OpenAPI document
 * lists them as components.
 */
import { Type as T, type Static } from "@sinclair/typebox";
import { named } from "../../lib/named-schema";
import { Nullable } from "./schemas";

/** OpenAI's error object, added to every error body so the SDKs can show it (docs/decisions.md). */
export const OpenAIErrorObject = T.Object(
  {
    message: T.String({ description: "Korean by default, English when Accept-Language prefers it" }),
    type: T.String({
      description:
        "OpenAI's error type (invalid_request_error, authentication_error, insufficient_quota, permission_error, rate_limit_error, server_error)",
    }),
    code: T.String({ description: "Our error code" }),
    param: Nullable(T.String({ description: "The field at fault, when known" })),
  },
  { description: "OpenAI's error object: what the openai SDK, LangChain and the Vercel AI SDK read" },
);
export type OpenAIErrorObject = Static<typeof OpenAIErrorObject>;

export const StructuredError = named(
  "StructuredError",
  T.Object(
    {
      detail: T.Object({
        error: T.String({ description: "The error code" }),
        message: T.String(),
        action: T.Optional(T.Object({ type: T.String(), path: T.String() }, { description: "What to do about it" })),
        retryable: T.Optional(T.Boolean()),
        providers: T.Optional(T.Array(T.Unknown(), { description: "Each provider tried, and how it failed" })),
        upstream: T.Optional(
          T.Object(
            { status: T.Integer(), reason: T.String(), detail: T.String() },
            { description: "A provider's refusal: its status, what it means and our words for it" },
          ),
        ),
        suggestions: T.Optional(T.Array(T.String(), { description: "Model ids to try instead" })),
      }),
      error: OpenAIErrorObject,
    },
    { description: "Structured error" },
  ),
);
export type StructuredError = Static<typeof StructuredError>;

export const CompatibleError = named(
  "CompatibleError",
  T.Object(
    {
      error: T.Object({
        message: T.String(),
        type: T.String({ description: "The error code" }),
        code: T.String({ description: "The error code (as type)" }),
        param: Nullable(T.String()),
      }),
    },
    { description: "OpenAI-compatible error envelope" },
  ),
);
export type CompatibleError = Static<typeof CompatibleError>;

export const ValidationErrorBody = named(
  "ValidationError",
  T.Object(
    {
      detail: T.Array(
        T.Object({
          loc: T.Array(T.Union([T.String(), T.Integer()]), { examples: [["body", "messages", 0, "role"]] }),
          msg: T.String(),
          type: T.String(),
        }),
        { minItems: 1 },
      ),
      error: OpenAIErrorObject,
    },
    { description: "Validation failures, one per field" },
  ),
);
export type ValidationErrorBody = Static<typeof ValidationErrorBody>;
