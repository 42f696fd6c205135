/**
 * Anthropic's token counting (`POST /v1/messages/count_tokens`): the prompt's tokens by the
 * simulator's one rule, exactly as `/v1/messages` would report them in `input_tokens` plus its
 * cache reads and writes (a count ignores caching). Unknown fields are refused as Anthropic does.
 */
import { readJsonBody } from "../http.ts";
import type { SimContext } from "../routes.ts";
import { anthropicError } from "./anthropic-errors.ts";
import { anthropicPromptBlocks, type AnthropicMessage, type AnthropicRequest } from "./anthropic-messages.ts";

/** The fields Anthropic's count_tokens takes (SDK 1.14.0's MessageCountTokensParams, beta included). */
const FIELDS = new Set([
  "model",
  "messages",
  "system",
  "tools",
  "tool_choice",
  "thinking",
  "mcp_servers",
  "context_management",
  "output_config",
  "output_format",
  "cache_control",
  "speed",
  "compaction",
  "billing_policy",
  "user_profile_id",
  "workspace_id",
]);

export async function handleAnthropicCountTokens(ctx: SimContext): Promise<Response> {
  const { body } = await readJsonBody<AnthropicRequest>(ctx);
  const extra = Object.keys(body).find((k) => !FIELDS.has(k));
  if (extra) return anthropicError(400, `${extra}: Extra inputs are not permitted`);
  if (typeof body.model !== "string" || body.model === "") return anthropicError(400, "model: Field required");
  if (!Array.isArray(body.messages) || body.messages.length === 0)
    return anthropicError(400, "messages: at least one message is required");
  const { promptTokens } = anthropicPromptBlocks(body, body.messages as AnthropicMessage[]);
  return Response.json({ input_tokens: promptTokens });
}
