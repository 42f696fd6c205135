/**
 * Response-cache types and the storage port. The core decides what matches; the database
 * repository (src/db/repos/response-cache.ts) only stores and fetches.
 */
import type { ChatMessage, FinishReason, ToolCall, Usage } from "../model/types";
import type { CacheMode } from "../auth/principal";

export type { CacheMode };

/**
 * A request as the cache sees it: the chat request's fields with `model` being the model id
 * the client asked for (after vendor-prefix normalization), not the provider's own id.
 * Extra client fields are allowed; `stream`, `stream_options`, `trace_id`, `user` and
 * `metadata` are ignored, everything else is part of the key.
 */
export interface CacheableRequest {
  model: string;
  messages: ChatMessage[];
  [param: string]: unknown;
}

/** What is stored for one request: enough to answer again without a provider call. */
export interface StoredAnswer {
  content: string | null;
  toolCalls?: ToolCall[];
  finishReason: FinishReason;
  /** The original call's usage (the hit itself costs nothing). */
  usage: Usage;
  /** The provider that produced the answer (null when the pipeline did not know it). */
  provider: string | null;
  /** The model id the answer came from. */
  model: string;
}

/** A cache hit, as `ResponseCache.lookup` returns it. */
export interface CachedAnswer extends StoredAnswer {
  match: "exact" | "semantic";
  /** Cosine similarity of a semantic hit (1 for an exact hit). */
  similarity: number;
  /** When the answer was stored. */
  storedAt: Date;
}

export interface NewCacheEntry {
  keyId: string;
  requestHash: string;
  model: string;
  paramHash: string;
  embedding: number[] | null;
  answer: StoredAnswer;
  ttlSeconds: number;
}

export interface StoredHit {
  answer: StoredAnswer;
  createdAt: Date;
}

/** The storage port; every method may throw (the cache turns failures into misses). */
export interface ResponseCacheStore {
  /** The live entry for (key, request hash), counting the hit; null when absent or expired. */
  takeExact(keyId: string, requestHash: string): Promise<StoredHit | null>;
  /** The most recent live embeddings of a semantic group, newest first, at most `limit`. */
  recentEmbeddings(
    keyId: string,
    model: string,
    paramHash: string,
    limit: number,
  ): Promise<{ id: string; embedding: number[] }[]>;
  /** One live entry by id, counting the hit; null when it expired meanwhile. */
  takeById(id: string): Promise<StoredHit | null>;
  /** Inserts or replaces the entry for (key, request hash), with a fresh expiry. */
  put(entry: NewCacheEntry): Promise<void>;
  /** Deletes up to `batch` expired entries; returns how many. */
  purgeExpired(batch: number): Promise<number>;
}
