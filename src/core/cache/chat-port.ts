/**
 * The response cache in the shape the chat service calls it: the requested model id as its
 * own argument and the answer as a `ChatResult`. Structural, so the service's port type is
 * satisfied without this module importing the service.
 */
import type { ChatRequest, ChatResult } from "../model/types";
import type { LookupStage, ResponseCache } from "./response-cache";
import type { CacheMode } from "./types";

export interface ChatCacheAnswer {
  result: ChatResult;
  model: string;
  provider: string | null;
}

export interface ChatCachePort {
  lookup(
    keyId: string,
    mode: CacheMode,
    model: string,
    req: Omit<ChatRequest, "model">,
    stage?: LookupStage,
  ): Promise<ChatCacheAnswer | null>;
  store(
    keyId: string,
    mode: CacheMode,
    model: string,
    req: Omit<ChatRequest, "model">,
    answer: ChatCacheAnswer,
  ): Promise<void>;
}

/** Adapts a `ResponseCache` to the chat service; like the cache itself, it never throws. */
export function chatCachePort(cache: ResponseCache): ChatCachePort {
  return {
    async lookup(keyId, mode, model, req, stage) {
      const hit = await cache.lookup(keyId, mode, { ...req, model }, stage);
      if (!hit) return null;
      const result: ChatResult = { content: hit.content, finishReason: hit.finishReason, usage: hit.usage };
      if (hit.toolCalls?.length) result.toolCalls = hit.toolCalls;
      return { result, model: hit.model, provider: hit.provider };
    },
    store(keyId, mode, model, req, a) {
      return cache.store(
        keyId,
        mode,
        { ...req, model },
        {
          content: a.result.content,
          toolCalls: a.result.toolCalls,
          finishReason: a.result.finishReason,
          usage: a.result.usage,
          provider: a.provider,
          model: a.model,
        },
      );
    },
  };
}
