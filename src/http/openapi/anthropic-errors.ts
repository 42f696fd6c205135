/**
 * The Messages routes' error answers in the OpenAPI document: Anthropic's envelope (declared in
 * src/surfaces/anthropic/schemas.ts, the body the error renderer writes for these routes) with
 * the gateway's statuses.
 */
import type { TSchema } from "@sinclair/typebox";
import type { ErrorStatus } from "./describe";
import { AnthropicError } from "../../surfaces/anthropic/schemas";

/** Error answers of the Messages routes: Anthropic's envelope with the gateway's statuses. */
export function anthropicErrors(
  ...statuses: ErrorStatus[]
): Record<string, { description: string; content: { "application/json": { schema: TSchema } } }> {
  return Object.fromEntries(
    statuses.map((s) => [
      s,
      {
        description: `Anthropic's error envelope (status ${s}; 402 is \`billing_error\`)`,
        content: { "application/json": { schema: AnthropicError } },
      },
    ]),
  );
}
