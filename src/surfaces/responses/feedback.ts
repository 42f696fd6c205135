/**
 * The feedback body of `POST /v1/responses/{request_id}/feedback` and the stored record as
 * returned. `rating` is `"up"` (1), `"down"` (-1) or an integer -1, 0 or 1 (0: neutral);
 * `comment` at most 2,000 characters; `category` a short lower-case tag (for example
 * `accuracy`, `latency`, `format`, `refusal`, `other`) the routing engine may group by.
 */
import { t } from "elysia";

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
