/**
 * The feedback body of `POST /v1/responses/{request_id}/feedback` and the stored record as
 * returned. `rating` is `"up"` (1), `"down"` (-1) or an integer -1, 0 or 1 (0: neutral);
 * `comment` at most 2,000 characters; `category` a short lower-case tag (for example
 * `accuracy`, `latency`, `format`, `refusal`, `other`) the routing engine may group by.
 */
import { t } from "elysia";
import { responseId } from "./ids";
import type { Feedback } from "./schemas";

export const FeedbackBodySchema = t.Object(
  {
    rating: t.Union([t.Literal("up"), t.Literal("down"), t.Integer({ minimum: -1, maximum: 1 })]),
    comment: t.Optional(t.Union([t.String({ maxLength: 2000 }), t.Null()])),
    category: t.Optional(t.Union([t.String({ pattern: "^[a-z0-9_-]{1,64}$" }), t.Null()])),
  },
  { additionalProperties: true },
);

export type FeedbackBody = typeof FeedbackBodySchema.static;

export function ratingValue(r: FeedbackBody["rating"]): -1 | 0 | 1 {
  return r === "up" ? 1 : r === "down" ? -1 : (r as -1 | 0 | 1);
}

/** A stored rating as the client reads it back. */
export interface FeedbackRecord {
  rating: number;
  comment: string | null;
  category: string | null;
  model: string | null;
  provider: string | null;
  createdAt: Date;
  updatedAt: Date;
}

/** A rating of the request `requestId` (a UUID), as answered. */
export function feedbackJson(requestId: string, row: FeedbackRecord): Feedback {
  return {
    request_id: requestId,
    response_id: responseId(requestId),
    rating: row.rating,
    comment: row.comment,
    category: row.category,
    model: row.model,
    provider: row.provider,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
}
