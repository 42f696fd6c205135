/**
 * The Responses dialect's answer bodies, declared once: the response object (as answered, inside
 * `response.created` / `response.completed`, and as kept by RESPONSES_STORE), its output items,
 * the deletion receipt and a feedback record. The encoders (./from-core.ts, ./feedback.ts)
 * return `Static<>` of these; the OpenAPI document shows them; test/surfaces checks both our own
 * answers and OpenAI's relayed ones against them. Where OpenAI's own answer (relayed as it came)
 * can carry more than the gateway writes (reasoning items, built-in tools, a `failed` status),
 * the schema says so.
 */
import { Type as T, type Static } from "@sinclair/typebox";
import { named } from "../../lib/named-schema";
import { CostJson, Nullable } from "../openai/schemas";

/** A web plugin source, in the Responses format. */
export const UrlCitationAnnotation = T.Object({
  type: T.Literal("url_citation"),
  url: T.String(),
  title: T.String(),
  start_index: T.Integer(),
  end_index: T.Integer(),
});
export type UrlCitationAnnotation = Static<typeof UrlCitationAnnotation>;

export const OutputText = T.Object({
  type: T.Literal("output_text"),
  text: T.String(),
  annotations: T.Array(UrlCitationAnnotation),
});
export type OutputText = Static<typeof OutputText>;

const Refusal = T.Object({ type: T.Literal("refusal"), refusal: T.String() }, { description: "OpenAI's, relayed" });
const ItemStatus = T.Union([T.Literal("in_progress"), T.Literal("completed"), T.Literal("incomplete")]);

export const MessageItem = T.Object({
  id: T.String({ description: "`msg_` and 32 hex digits" }),
  type: T.Literal("message"),
  status: ItemStatus,
  role: T.Literal("assistant"),
  content: T.Array(T.Union([OutputText, Refusal])),
});
export type MessageItem = Static<typeof MessageItem>;

export const FunctionCallItem = T.Object({
  id: T.String({ description: "`fc_` and 32 hex digits" }),
  type: T.Literal("function_call"),
  status: ItemStatus,
  arguments: T.String({ description: "The arguments as a JSON string" }),
  call_id: T.String(),
  name: T.String(),
});
export type FunctionCallItem = Static<typeof FunctionCallItem>;

/** An item only a relayed OpenAI answer has (`reasoning`, `web_search_call`, ...): never a message or a call. */
const RelayedItem = T.Object(
  {
    type: T.Intersect([T.String(), T.Not(T.Union([T.Literal("message"), T.Literal("function_call")]))]),
    id: T.Optional(T.String()),
  },
  { description: "An item of OpenAI's own answer, relayed as it came (`reasoning`, built-in tool calls)" },
);

export const OutputItem = T.Union([MessageItem, FunctionCallItem, RelayedItem]);
/** What the gateway's own encoders write: a message or a function call. */
export type OwnOutputItem = MessageItem | FunctionCallItem;

export const ResponsesUsage = T.Object({
  input_tokens: T.Integer(),
  input_tokens_details: T.Object({ cached_tokens: T.Integer() }),
  output_tokens: T.Integer(),
  output_tokens_details: T.Object({ reasoning_tokens: T.Integer() }),
  total_tokens: T.Integer(),
});
export type ResponsesUsage = Static<typeof ResponsesUsage>;

const FunctionTool = T.Object({
  type: T.Literal("function"),
  name: T.String(),
  // Always written by the gateway; a relayed answer echoes the client's tools as they were sent.
  description: T.Optional(Nullable(T.String())),
  parameters: T.Optional(Nullable(T.Record(T.String(), T.Unknown()))),
  strict: T.Optional(Nullable(T.Boolean())),
});
const RelayedTool = T.Object(
  { type: T.Intersect([T.String(), T.Not(T.Literal("function"))]) },
  { description: "A built-in tool of OpenAI's own answer, relayed" },
);

/** What a response echoes of its request (OpenAI's fields; SDK types expect them). */
export const Echo = T.Object({
  instructions: Nullable(T.String()),
  max_output_tokens: Nullable(T.Integer()),
  temperature: Nullable(T.Number()),
  top_p: Nullable(T.Number()),
  tools: T.Array(T.Union([FunctionTool, RelayedTool])),
  tool_choice: T.Unknown(),
  parallel_tool_calls: T.Boolean(),
  reasoning: T.Object({ effort: Nullable(T.String()), summary: Nullable(T.String()) }),
  service_tier: Nullable(T.String()),
  metadata: T.Record(T.String(), T.Unknown()),
  text: T.Object({ format: T.Record(T.String(), T.Unknown()) }),
  store: T.Boolean({ description: "Whether the answer is kept (RESPONSES_STORE=on and not `store: false`)" }),
  previous_response_id: Nullable(T.String({ description: "The stored response this one continued" })),
});
export type Echo = Static<typeof Echo>;

export const ResponseObject = named(
  "Response",
  T.Object({
    id: T.String({ description: "`resp_` and the request id's 32 hex digits" }),
    object: T.Literal("response"),
    created_at: T.Integer(),
    status: T.Union([
      T.Literal("in_progress"),
      T.Literal("completed"),
      T.Literal("incomplete"),
      T.Literal("failed"),
      T.Literal("cancelled"),
      T.Literal("queued"),
    ]),
    background: T.Boolean(),
    error: Nullable(T.Object({ code: T.String(), message: T.String() })),
    incomplete_details: Nullable(T.Object({ reason: T.String() })),
    ...Echo.properties,
    model: T.String(),
    output: T.Array(OutputItem),
    truncation: T.String(),
    usage: Nullable(ResponsesUsage),
    user: T.Optional(
      Nullable(T.String({ description: "Always null from the gateway; a relayed answer may leave it out" })),
    ),
    // Gateway extensions, as on chat: who answered, whether the cache did, what it cost.
    provider: Nullable(T.String()),
    cached: T.Boolean(),
    cost: T.Optional(CostJson),
  }),
);
export type ResponseObject = Static<typeof ResponseObject>;

export const DeletedResponse = named(
  "DeletedResponse",
  T.Object({ id: T.String(), object: T.Literal("response"), deleted: T.Literal(true) }),
);
export type DeletedResponse = Static<typeof DeletedResponse>;

export const Feedback = named(
  "Feedback",
  T.Object({
    request_id: T.String(),
    response_id: T.String(),
    rating: T.Integer({ minimum: -1, maximum: 1 }),
    comment: Nullable(T.String()),
    category: Nullable(T.String()),
    model: Nullable(T.String()),
    provider: Nullable(T.String()),
    created_at: T.String({ format: "date-time" }),
    updated_at: T.String({ format: "date-time" }),
  }),
);
export type Feedback = Static<typeof Feedback>;
