/**
 * What of a Messages request the translation to the core's chat request cannot say, so an
 * upstream of another protocol (or the Anthropic adapter's own translation) reports it as
 * dropped in `x-gateway-warnings` instead of letting the client believe it applied. An Anthropic
 * upstream that gets the client's own body carries all of it and reports nothing.
 *
 * - top-level fields the translation does not read (`context_management`, `top_k`,
 *   `container`, `mcp_servers`, `service_tier`, `speed`, a top-level `cache_control`, …);
 * - `output_config` members other than `effort` and `format`;
 * - server tools (`type` such as `web_search_20250305`), by their type;
 * - on `system` messages: fields other than `role`, `content`, `output_config` and `clear_at`
 *   (which the translation honours), and content blocks other than text and `tool_addition`
 *   (`tool_removal`: a translated model keeps every tool), by their type;
 * - the `anthropic-beta` header.
 */
import type { DroppedSetting } from "../../core/upstream/warnings";
import { GATEWAY_FIELDS, type CountTokensBody, type RawBlock } from "./schema";

/** Top-level fields the translation maps (to-core.ts) or that are the gateway's own. */
const MAPPED = new Set<string>([
  "model",
  "max_tokens",
  "messages",
  "system",
  "stop_sequences",
  "stream",
  "temperature",
  "top_p",
  "tools",
  "tool_choice",
  "thinking",
  "metadata",
  "output_config",
  ...GATEWAY_FIELDS,
]);
const MAPPED_OUTPUT_CONFIG = new Set(["effort", "format"]);
const MAPPED_SYSTEM_MESSAGE = new Set(["role", "content", "output_config", "clear_at"]);

/** The dropped settings of `body` (and of its `anthropic-beta` header), each named once, in order. */
export function unmappedSettings(body: CountTokensBody, beta: string | null): DroppedSetting[] {
  const out: DroppedSetting[] = [];
  const seen = new Set<string>();
  const add = (setting: string, details?: string): void => {
    if (seen.has(setting)) return;
    seen.add(setting);
    out.push(details === undefined ? { setting } : { setting, details });
  };
  const raw = body as Record<string, unknown>;
  for (const key of Object.keys(raw)) if (!MAPPED.has(key) && raw[key] !== undefined) add(key);
  for (const key of Object.keys(body.output_config ?? {}))
    if (!MAPPED_OUTPUT_CONFIG.has(key)) add(`output_config.${key}`);
  for (const tool of body.tools ?? [])
    if (tool.type !== undefined && tool.type !== "custom") add(tool.type, "an Anthropic server tool");
  for (const m of body.messages) {
    if (m.role !== "system") continue;
    for (const key of Object.keys(m)) if (!MAPPED_SYSTEM_MESSAGE.has(key)) add(`messages.${key}`);
    if (Array.isArray(m.content))
      for (const b of m.content as RawBlock[])
        if (b.type !== "text" && b.type !== "tool_addition") add(b.type, "a block of a system message");
  }
  if (beta) add("anthropic-beta", beta);
  return out;
}
