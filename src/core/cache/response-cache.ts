/**
 * The response cache use-case: per API key, answer a request again from a stored answer
 * (`exact`: identical normalized request; `semantic`: exact first, then a single-turn
 * request whose user text embeds within `threshold` cosine of a stored one with the same
 * model, parameters and system prompt).
 *
 * The cache is an optimization, never a dependency: a database or embedding failure makes
 * `lookup` a miss and `store` a no-op, logged, and the request goes on to the provider.
 */
import { log } from "../../lib/log";
import { sha256Hex } from "../../lib/secrets";
import { bestMatch, isCacheable, paramHash, requestHash, singleTurn } from "./normalize";
import type { CacheableRequest, CachedAnswer, CacheMode, ResponseCacheStore, StoredAnswer } from "./types";

/** Turns a text into its embedding (the pipeline wires the catalog's embedding model). */
export type EmbedFn = (text: string) => Promise<number[]>;

export type LookupOutcome = "exact_hit" | "semantic_hit" | "miss" | "error";

/** Which matching a lookup runs: both (exact, then by similarity), or one of them. */
export type LookupStage = "both" | "exact" | "similar";

export interface ResponseCacheOptions {
  /** Lifetime of an entry (config `RESPONSE_CACHE_TTL_SECONDS`). Fractions allowed. */
  ttlSeconds: number;
  /** Cosine similarity for a semantic hit (config `SEMANTIC_CACHE_THRESHOLD`, default 0.95). */
  threshold: number;
  /** Needed for `semantic`; without it `semantic` behaves as `exact`. */
  embed?: EmbedFn;
  /**
   * How many of a group's most recent entries a semantic lookup compares (default 200).
   * The comparison runs in TypeScript (no pgvector), so this bounds its cost: an older
   * entry beyond the newest N of its (key, model, parameters) group is found only exactly.
   */
  candidateLimit?: number;
  /** An embedding slower than this is given up for this request (default 2000 ms). */
  embedTimeoutMs?: number;
  /** Called once per lookup in a non-off mode, for metrics. */
  onOutcome?: (outcome: LookupOutcome, mode: CacheMode) => void;
}

/** Recently computed embeddings, so `store` after a missed `lookup` does not embed twice. */
const EMBED_MEMO_SIZE = 256;
const EMBED_MEMO_TTL_MS = 60_000;

export class ResponseCache {
  private readonly candidateLimit: number;
  private readonly embedTimeoutMs: number;
  private readonly memo = new Map<string, { vector: number[]; at: number }>();

  constructor(
    private readonly repo: ResponseCacheStore,
    private readonly opts: ResponseCacheOptions,
  ) {
    this.candidateLimit = opts.candidateLimit ?? 200;
    this.embedTimeoutMs = opts.embedTimeoutMs ?? 2000;
  }

  /**
   * The stored answer for this request under this key, or null (miss, off, or any failure).
   * `stage` runs one half of it: `exact` only reads the database; `similar` (semantic mode)
   * embeds the prompt, an upstream call someone pays for, so a caller runs it after the
   * credit check (see ChatService.run).
   */
  async lookup(
    keyId: string,
    mode: CacheMode,
    req: CacheableRequest,
    stage: LookupStage = "both",
  ): Promise<CachedAnswer | null> {
    if (mode === "off" || !isCacheable(req)) return null;
    let outcome: LookupOutcome = "miss";
    try {
      const hit = await this.find(keyId, mode, req, stage);
      if (hit) outcome = hit.match === "exact" ? "exact_hit" : "semantic_hit";
      return hit;
    } catch (err) {
      outcome = "error";
      log.warn("response cache lookup failed; treating as a miss", { keyId, mode, err });
      return null;
    } finally {
      this.opts.onOutcome?.(outcome, mode);
    }
  }

  /** Stores a provider's answer for later hits. Never throws. */
  async store(keyId: string, mode: CacheMode, req: CacheableRequest, answer: StoredAnswer): Promise<void> {
    if (mode === "off" || !isCacheable(req)) return;
    // A filtered answer says something about that one generation, not about the question.
    if (answer.finishReason === "content_filter") return;
    try {
      let embedding: number[] | null = null;
      const turn = mode === "semantic" && this.opts.embed ? singleTurn(req) : null;
      if (turn) {
        // Without the embedding the entry still serves exact hits; store it anyway.
        embedding = await this.embedText(turn.text).catch((err) => {
          log.warn("response cache embedding failed; storing for exact hits only", { keyId, err });
          return null;
        });
      }
      await this.repo.put({
        keyId,
        requestHash: requestHash(req),
        model: req.model,
        paramHash: paramHash(req),
        embedding,
        answer: toStoredAnswer(answer),
        ttlSeconds: this.opts.ttlSeconds,
      });
    } catch (err) {
      log.warn("response cache store failed", { keyId, mode, err });
    }
  }

  /** Deletes expired entries in batches; returns how many went. For the sweeper. */
  async purgeExpired(batch = 5000): Promise<number> {
    let total = 0;
    for (;;) {
      const n = await this.repo.purgeExpired(batch);
      total += n;
      if (n < batch) return total;
    }
  }

  private async find(
    keyId: string,
    mode: CacheMode,
    req: CacheableRequest,
    stage: LookupStage,
  ): Promise<CachedAnswer | null> {
    if (stage !== "similar") {
      const exact = await this.repo.takeExact(keyId, requestHash(req));
      if (exact) return { ...exact.answer, match: "exact", similarity: 1, storedAt: exact.createdAt };
    }
    if (stage === "exact" || mode !== "semantic" || !this.opts.embed) return null;
    const turn = singleTurn(req);
    if (!turn) return null;

    const query = await this.embedText(turn.text);
    const candidates = await this.repo.recentEmbeddings(keyId, req.model, paramHash(req), this.candidateLimit);
    const best = bestMatch(query, candidates, this.opts.threshold);
    if (!best) return null;
    const hit = await this.repo.takeById(best.item.id);
    if (!hit) return null;
    return { ...hit.answer, match: "semantic", similarity: best.similarity, storedAt: hit.createdAt };
  }

  private async embedText(text: string): Promise<number[]> {
    const k = sha256Hex(text);
    const now = Date.now();
    const m = this.memo.get(k);
    if (m && now - m.at < EMBED_MEMO_TTL_MS) return m.vector;

    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`embedding took longer than ${this.embedTimeoutMs} ms`)),
        this.embedTimeoutMs,
      );
    });
    try {
      const vector = await Promise.race([this.opts.embed!(text), timeout]);
      if (!Array.isArray(vector) || vector.length === 0 || !vector.every(Number.isFinite))
        throw new Error("embedding is not a non-empty finite vector");
      if (this.memo.size >= EMBED_MEMO_SIZE) this.memo.delete(this.memo.keys().next().value!);
      this.memo.set(k, { vector, at: now });
      return vector;
    } finally {
      clearTimeout(timer);
    }
  }
}

/** Only the answer's own fields are stored (a caller may pass a richer object). */
function toStoredAnswer(a: StoredAnswer): StoredAnswer {
  return {
    content: a.content,
    ...(a.toolCalls?.length ? { toolCalls: a.toolCalls } : {}),
    finishReason: a.finishReason,
    usage: a.usage,
    provider: a.provider,
    model: a.model,
  };
}
