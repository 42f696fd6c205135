/**
 * Video job domain types: the normalized request an adapter sends upstream, the job as the
 * store keeps it, and the job object the API shows.
 */
import type { Resolution, VideoFamily } from "../catalog/types";

export type JobStatus = "processing" | "succeeded" | "failed" | "canceled";

/** How an image reference is used upstream (Family S vocabulary, also used for K and G). */
export type ImageRole = "first_frame" | "last_frame" | "reference_image";

/** The request after the general rules, the family's rules and its normalizations. */
export interface NormalizedVideoRequest {
  prompt: string;
  /** Seconds of output; null when the model chooses the length (Family G Omni). */
  durationSeconds: number | null;
  /** What the client asked for (or the default), before normalization. */
  requestedResolution: Resolution;
  /** What the upstream renders and what is priced (Family L: 480p/720p → 1080p). */
  outputResolution: Resolution;
  /** Family K takes no resolution: the adapter must not send one. */
  sendResolution: boolean;
  generateAudio: boolean;
  images: { url: string; role: ImageRole }[];
  videos: string[];
  audios: string[];
}

/** `{code, message}` of a failed or canceled job (documented in docs/video.md). */
export interface JobError {
  code: JobErrorCode;
  message: string;
}

export type JobErrorCode =
  | "generation_failed"
  | "content_filtered"
  | "generation_expired"
  | "generation_timeout"
  | "submit_failed"
  | "download_failed"
  | "upstream_error"
  | "canceled";

export interface JobAsset {
  type: "video";
  url: string;
}

export type BillingMode = "per_second" | "per_token" | "fixed";

/** A job as stored. Money in micro-won. */
export interface VideoJobRecord {
  id: string;
  userId: string;
  keyId: string;
  model: string;
  family: VideoFamily;
  providerId: string;
  protocol: string;
  upstreamModel: string;
  status: JobStatus;
  request: NormalizedVideoRequest;
  upstreamTask: string | null;
  upstreamStatus: string | null;
  /** For Family G a path (`/v1/jobs/{id}/content`) made absolute when shown. */
  resultUrl: string | null;
  costMicro: bigint | null;
  error: JobError | null;
  assets: JobAsset[];
  billing: BillingMode;
  holdMicro: bigint;
  priceMicro: bigint | null;
  krwPer1kTokens: number | null;
  outputTokens: number | null;
  storageKey: string | null;
  contentType: string | null;
  contentSize: number | null;
  contentExpiresAt: Date | null;
  contentDeletedAt: Date | null;
  pollCount: number;
  errorCount: number;
  nextPollAt: Date;
  claimOwner: string | null;
  claimUntil: Date | null;
  deadlineAt: Date;
  createdAt: Date;
  finishedAt: Date | null;
}

/** The job object of the specification. */
export interface VideoJobView {
  job_id: string;
  status: JobStatus;
  model: string;
  result_url: string | null;
  cost: { krw: number } | null;
  error: JobError | null;
  assets: JobAsset[];
  created_at: string;
}

/** Family G results are served by the gateway itself. */
export const contentPath = (jobId: string) => `/v1/jobs/${jobId}/content`;

export const isFamilyG = (family: VideoFamily) => family === "G" || family === "G-omni";
