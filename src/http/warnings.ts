/**
 * The settings a call could not send reach the client as one response header, on JSON and
 * streamed answers alike (the dialects' bodies are validated strictly by their SDKs, so they
 * stay as they are): `x-gateway-warnings: unsupported-setting=logit_bias; provider=anthropic`,
 * one entry per setting, comma-separated. Each is counted in `gateway_dropped_params_total`.
 */
import type { CallWarning } from "../core/upstream/warnings";
import type { GatewayMetrics } from "./metrics";

export const WARNINGS_HEADER = "x-gateway-warnings";

/** The canonical request's own settings: any other (a passthrough key) is counted as `other`. */
const KNOWN = new Set([
  "temperature",
  "top_p",
  "stop",
  "tools",
  "tool_choice",
  "response_format",
  "seed",
  "frequency_penalty",
  "presence_penalty",
  "parallel_tool_calls",
  "logit_bias",
  "reasoning_effort",
  "service_tier",
  "user",
]);

/** A passthrough key is the client's own text: only a plain name goes into a header. */
const NAME = /^[A-Za-z0-9_.-]{1,64}$/;

/** The header for `warnings` (none without any), counting each warning once. */
export function warningHeaders(metrics: GatewayMetrics, warnings: readonly CallWarning[]): Record<string, string> {
  if (!warnings.length) return {};
  for (const w of warnings)
    metrics.droppedParams.inc({ provider: w.provider, param: KNOWN.has(w.setting) ? w.setting : "other" });
  const entries = warnings.map(
    (w) => `${w.type}=${NAME.test(w.setting) ? w.setting : "other"}; provider=${w.provider}`,
  );
  return { [WARNINGS_HEADER]: entries.join(", ") };
}
