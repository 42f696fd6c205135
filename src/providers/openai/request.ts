/**
 * Canonical ChatRequest → OpenAI Chat Completions request body (OpenAI, DeepSeek, Together,
 * Groq and other compatible upstreams).
 */
import type { ChatMessage, ChatRequest, ContentPart, ReasoningEffort } from "../../core/model/types";
import { droppedIfSet, type BuiltRequest } from "../common/dropped";
import type { DroppedSetting } from "../../core/upstream/warnings";

export interface OpenAIRequestOptions {
  stream: boolean;
  /** Forward `service_tier` (only the OpenAI family takes it). */
  forwardServiceTier?: boolean;
  /** Send the limit as `max_completion_tokens` (OpenAI reasoning models reject `max_tokens`). */
  useMaxCompletionTokens?: boolean;
}

const NONE_DROPPED: DroppedSetting[] = [];

/** Body fields the gateway owns: passthrough extras may not override them. */
const RESERVED = new Set(["model", "messages", "stream", "stream_options", "max_tokens", "max_completion_tokens", "n"]);

/**
 * `reasoning_effort` as OpenAI-compatible upstreams take it. OpenAI knows none, minimal, low,
 * medium, high and xhigh; the gateway's `max` has no OpenAI value and becomes `xhigh`.
 */
export function mapOpenAIReasoningEffort(effort: ReasoningEffort): string {
  return effort === "max" ? "xhigh" : effort;
}

const REASONING_FAMILY = /^(o\d|gpt-5)/;

/**
 * OpenAI's reasoning models (o-series, gpt-5 family) only take `max_completion_tokens`.
 * Other compatible upstreams (DeepSeek, Together, Groq) take `max_tokens`.
 */
export function usesOpenAIMaxCompletionTokens(providerId: string, model: string): boolean {
  return providerId === "openai" && REASONING_FAMILY.test(model);
}

/** Builds the request body. Pure. */
export function toOpenAIChatRequest(req: ChatRequest, opts: OpenAIRequestOptions): Record<string, unknown> {
  return buildOpenAIChatRequest(req, opts).body;
}

/**
 * The body and what it leaves out: `service_tier` for a provider that takes none, and the
 * client dialect's settings the canonical request could not say (`req.unmapped`); every other
 * setting reaches an OpenAI-compatible upstream as it came.
 */
export function buildOpenAIChatRequest(req: ChatRequest, opts: OpenAIRequestOptions): BuiltRequest {
  const body: Record<string, unknown> = {};
  if (req.passthrough) {
    for (const [k, v] of Object.entries(req.passthrough)) {
      if (RESERVED.has(k)) continue;
      if (k === "service_tier" && !opts.forwardServiceTier) continue;
      body[k] = v;
    }
  }
  body.model = req.model;
  body.messages = req.messages.map(toOpenAIMessage);
  if (opts.useMaxCompletionTokens) body.max_completion_tokens = req.max_tokens;
  else body.max_tokens = req.max_tokens;
  setIfDefined(body, "temperature", req.temperature);
  setIfDefined(body, "top_p", req.top_p);
  setIfDefined(body, "stop", req.stop);
  setIfDefined(body, "tools", req.tools);
  setIfDefined(body, "tool_choice", req.tool_choice);
  setIfDefined(body, "response_format", req.response_format);
  setIfDefined(body, "seed", req.seed);
  setIfDefined(body, "frequency_penalty", req.frequency_penalty);
  setIfDefined(body, "presence_penalty", req.presence_penalty);
  setIfDefined(body, "parallel_tool_calls", req.parallel_tool_calls);
  setIfDefined(body, "logit_bias", req.logit_bias);
  if (req.reasoning_effort !== undefined) body.reasoning_effort = mapOpenAIReasoningEffort(req.reasoning_effort);
  // `auto` lets the project's settings pick a tier the gateway did not price: it is billed, and so sent, as `default`.
  if (opts.forwardServiceTier && req.service_tier !== undefined)
    body.service_tier = req.service_tier === "auto" ? "default" : req.service_tier;
  if (opts.stream) {
    const extra = req.passthrough?.stream_options;
    body.stream = true;
    body.stream_options = { ...(isObject(extra) ? extra : {}), include_usage: true };
  }
  // Usually nothing is dropped: then no list is made.
  const tier = !opts.forwardServiceTier && req.service_tier !== undefined;
  if (!tier && !req.unmapped?.length) return { body, dropped: NONE_DROPPED };
  const dropped = tier ? droppedIfSet(req, ["service_tier"]) : [];
  return { body, dropped: [...dropped, ...(req.unmapped ?? [])] };
}

/** One message as OpenAI takes it: `cache_control` (an Anthropic-style hint) is dropped. */
function toOpenAIMessage(m: ChatMessage): Record<string, unknown> {
  const out: Record<string, unknown> = {
    role: m.role,
    content: Array.isArray(m.content) ? m.content.map(toOpenAIPart) : m.content,
  };
  if (m.name !== undefined) out.name = m.name;
  if (m.tool_calls !== undefined && m.tool_calls.length > 0) out.tool_calls = m.tool_calls;
  if (m.tool_call_id !== undefined) out.tool_call_id = m.tool_call_id;
  return out;
}

function toOpenAIPart(p: ContentPart): Record<string, unknown> {
  if (p.type === "text") return { type: "text", text: p.text };
  return { type: "image_url", image_url: p.image_url };
}

function setIfDefined(body: Record<string, unknown>, key: string, value: unknown): void {
  if (value !== undefined) body[key] = value;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}
