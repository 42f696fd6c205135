/**
 * The video provider port: three calls shaped like every vendor's task API. Adapters live in
 * src/providers/video/<family>/ and throw `UpstreamError` (src/core/upstream/error.ts) for a
 * failed HTTP call. A task that the vendor reports as failed is not an error: `poll` returns
 * it as an outcome (vendors answer 200 with a failed status).
 */
import type { VideoFamily } from "../catalog/types";
import type { NormalizedVideoRequest } from "./types";

export interface VideoEndpoint {
  baseUrl: string;
  apiKey: string;
}

export interface VideoCall {
  endpoint: VideoEndpoint;
  /** Deadline of one HTTP exchange (submit, poll, or a download's first byte). */
  timeoutMs: number;
  signal?: AbortSignal;
}

export interface VideoSubmission {
  /** Our job id (vendors that take a client task id get it, for support lookups). */
  jobId: string;
  /** The model id on the vendor's wire. */
  upstreamModel: string;
  family: VideoFamily;
  request: NormalizedVideoRequest;
}

export type VideoPollOutcome =
  | { state: "pending"; upstreamStatus: string }
  | {
      state: "succeeded";
      upstreamStatus: string;
      /** Where the result can be fetched (a direct URL, or a vendor file for `download`). */
      videoUrl: string;
      /** Output tokens when the vendor reports them (Family G Omni bills by them). */
      outputTokens: number | null;
    }
  | { state: "failed"; upstreamStatus: string; reason: "failed" | "expired" | "filtered"; message: string };

export interface VideoDownload {
  body: ReadableStream<Uint8Array>;
  contentType: string;
  /** When the vendor sent a length. */
  size: number | null;
}

export interface VideoProvider {
  readonly protocol: string;
  /** Creates the upstream task; returns the reference `poll` needs. No retry: media generation is not retried. */
  submit(s: VideoSubmission, call: VideoCall): Promise<string>;
  poll(task: string, upstreamModel: string, call: VideoCall): Promise<VideoPollOutcome>;
  /** Fetches result bytes (Family G, whose vendor URL needs our credential). */
  download?(videoUrl: string, call: VideoCall): Promise<VideoDownload>;
}
