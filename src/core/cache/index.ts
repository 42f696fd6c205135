/** The response cache: normalization (pure), the use-case class, and the storage port. */
export {
  ResponseCache,
  type EmbedFn,
  type LookupOutcome,
  type LookupStage,
  type ResponseCacheOptions,
} from "./response-cache";
export {
  answerParams,
  bestMatch,
  canonicalJson,
  cosine,
  isCacheable,
  normalizeMessage,
  paramHash,
  requestHash,
  singleTurn,
  type SingleTurn,
} from "./normalize";
export type {
  CacheableRequest,
  CachedAnswer,
  CacheMode,
  NewCacheEntry,
  ResponseCacheStore,
  StoredAnswer,
  StoredHit,
} from "./types";
export { chatCachePort, type ChatCacheAnswer, type ChatCachePort } from "./chat-port";
