/**
 * The video routes' answer bodies, declared once: the specification's job object, and the
 * dashboard's richer record of an account's job and its pages. The encoders (./from-core.ts)
 * return `Static<>` of these; the OpenAPI document shows them; test/surfaces checks them.
 */
import { Type as T, type Static, type TSchema } from "@sinclair/typebox";
import { named } from "../../lib/named-schema";

const Nullable = <S extends TSchema>(s: S) => T.Union([s, T.Null()]);

const JobErrorCode = T.Union(
  (
    [
      "generation_failed",
      "content_filtered",
      "generation_expired",
      "generation_timeout",
      "submit_failed",
      "download_failed",
      "upstream_error",
      "canceled",
    ] as const
  ).map((c) => T.Literal(c)),
);

export const VideoJob = named(
  "VideoJob",
  T.Object({
    job_id: T.String({ format: "uuid" }),
    status: T.Union([T.Literal("processing"), T.Literal("succeeded"), T.Literal("failed"), T.Literal("canceled")]),
    model: T.String(),
    result_url: Nullable(T.String()),
    cost: Nullable(T.Object({ krw: T.Number({ description: "Korean won" }) })),
    error: Nullable(T.Object({ code: JobErrorCode, message: T.String() })),
    assets: T.Array(T.Object({ type: T.Literal("video"), url: T.String() })),
    created_at: T.String({ format: "date-time" }),
  }),
);
export type VideoJob = Static<typeof VideoJob>;

/** A job as the dashboard lists it: the job object plus its key, prompt and stored result. */
export const AccountVideoJob = named(
  "AccountVideoJob",
  T.Composite([
    VideoJob,
    T.Object({
      key_id: T.String({ format: "uuid" }),
      prompt: T.String(),
      content_url: Nullable(
        T.String({ description: "The stored result for the dashboard (Range supported), when the gateway keeps it" }),
      ),
    }),
  ]),
);
export type AccountVideoJob = Static<typeof AccountVideoJob>;

export const AccountVideoJobs = named(
  "AccountVideoJobs",
  T.Object({
    object: T.Literal("list"),
    data: T.Array(AccountVideoJob),
    has_more: T.Boolean(),
    next_cursor: Nullable(T.String({ description: "Pass as `cursor` for the next page" })),
  }),
);
export type AccountVideoJobs = Static<typeof AccountVideoJobs>;
