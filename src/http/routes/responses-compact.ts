/** POST /v1/responses/compact: needs a valid API key, then always 501 (docs/decisions.md #7). */
import { Elysia } from "elysia";
import { GatewayError, text } from "../../core/errors";
import type { AppDeps } from "../deps";
import { apiKeyAuth } from "../api-key-auth";
import { AUTH } from "../security";
import { errors } from "../openapi/describe";

export function compactRoutes(deps: AppDeps) {
  return new Elysia({ name: "responses-compact" }).use(apiKeyAuth(deps.auth)).post(
    "/v1/responses/compact",
    () => {
      throw new GatewayError(
        "not_implemented",
        text(
          "/v1/responses/compact는 지원하지 않습니다. 암호화된 항목을 만들지 않습니다.",
          "/v1/responses/compact is not supported: no encrypted items are made.",
        ),
      );
    },
    {
      apiKey: "model",
      parse: "none",
      detail: {
        security: AUTH.apiKey,
        tags: ["responses"],
        summary: "Always 501 (compaction is not offered)",
        responses: errors(501),
      },
    },
  );
}
