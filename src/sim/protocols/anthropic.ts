/** The Anthropic Messages route table (provider `anthropic`). */
import type { SimRouteTable } from "../routes.ts";
import { anthropicError, authenticateAnthropic } from "./anthropic-errors.ts";
import { handleAnthropicMessages } from "./anthropic-messages.ts";
import { handleAnthropicCountTokens } from "./anthropic-count-tokens.ts";

export const anthropicRoutes: SimRouteTable = {
  protocol: "anthropic-messages",
  authenticate: authenticateAnthropic,
  error: anthropicError,
  routes: {
    "POST /v1/messages": handleAnthropicMessages,
    "POST /v1/messages/count_tokens": handleAnthropicCountTokens,
  },
};
