/**
 * The provider registry: one adapter per wire protocol. The catalog says which protocol a
 * provider speaks (openai-compatible for OpenAI, DeepSeek, Together and Groq; anthropic;
 * gemini) and the CallContext carries its base URL and key.
 */
import type { ChatProvider, EmbeddingProvider, Protocol } from "../core/model/provider";
import { anthropicChatProvider } from "./anthropic";
import { geminiChatProvider } from "./gemini";
import { geminiEmbeddingProvider } from "./gemini/embed";
import { openAIChatProvider, openAIEmbeddingProvider } from "./openai";

const CHAT: Record<Protocol, ChatProvider> = {
  openai: openAIChatProvider,
  anthropic: anthropicChatProvider,
  gemini: geminiChatProvider,
};

/** The chat adapter for a protocol. */
export function chatProviderFor(protocol: Protocol): ChatProvider {
  const p = CHAT[protocol];
  if (!p) throw new Error(`no chat adapter for protocol ${String(protocol)}`);
  return p;
}

const EMBEDDING: Partial<Record<Protocol, EmbeddingProvider>> = {
  openai: openAIEmbeddingProvider,
  gemini: geminiEmbeddingProvider,
};

/** The embeddings adapter for a protocol, or undefined when the gateway has none for it (Anthropic has no embeddings API). */
export function embeddingProviderFor(protocol: Protocol): EmbeddingProvider | undefined {
  return EMBEDDING[protocol];
}

export {
  openAIChatProvider,
  openAIEmbeddingProvider,
  anthropicChatProvider,
  geminiChatProvider,
  geminiEmbeddingProvider,
};
