/**
 * The settings a call could not send reach the client as one response header, on JSON and
 * streamed answers alike (the dialects' bodies are validated strictly by their SDKs, so they
 * stay as they are): `x-gateway-warnings: unsupported-setting=logit_bias; provider=anthropic`,
 * one entry per setting, comma-separated. Each is counted in `gateway_dropped_params_total`.
 *
 * A deprecated model's answer (catalog/lifecycle.ts) adds its own entry first,
 * `deprecated-model=claude-sonnet-4-5; retires=2026-11-30; successor=claude-haiku-4-5`, and the
 * standard headers a client library may already read: `Deprecation` (RFC 9745, the day as
 * `@<unix seconds>`), `Sunset` (RFC 8594, the retirement day as an HTTP date) and a `Link` to
 * the successor (`rel="successor-version"`).
 */
import type { CallWarning } from "../core/upstream/warnings";
import type { ModelNotice } from "../core/catalog/lifecycle";
import type { GatewayMetrics } from "./metrics";

const WARNINGS_HEADER = "x-gateway-warnings";

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

/**
 * The headers for `warnings` and a deprecation `notice` (none without either), counting each
 * setting warning once.
 */
/** The headers of an answer without warnings: shared, never written to. */
const NO_HEADERS: Readonly<Record<string, string>> = Object.freeze({});

export function warningHeaders(
  metrics: GatewayMetrics,
  warnings: readonly CallWarning[],
  notice: ModelNotice | null = null,
): Readonly<Record<string, string>> {
  if (!warnings.length && !notice) return NO_HEADERS;
  for (const w of warnings)
    metrics.droppedParams.inc({ provider: w.provider, param: KNOWN.has(w.setting) ? w.setting : "other" });
  const entries = warnings.map(
    (w) => `${w.type}=${NAME.test(w.setting) ? w.setting : "other"}; provider=${w.provider}`,
  );
  if (!notice) return { [WARNINGS_HEADER]: entries.join(", ") };
  return { [WARNINGS_HEADER]: [noticeEntry(notice), ...entries].join(", "), ...deprecationHeaders(notice) };
}

function noticeEntry(n: ModelNotice): string {
  return [
    `deprecated-model=${n.model}`,
    ...(n.retiresAt ? [`retires=${n.retiresAt}`] : []),
    ...(n.successor ? [`successor=${n.successor}`] : []),
  ].join("; ");
}

const dayStart = (day: string) => new Date(`${day}T00:00:00Z`);

/** `Deprecation`, `Sunset` and the successor `Link` of a deprecated model's answer. */
function deprecationHeaders(n: ModelNotice): Record<string, string> {
  return {
    deprecation: `@${dayStart(n.deprecatedAt).getTime() / 1000}`,
    ...(n.retiresAt ? { sunset: dayStart(n.retiresAt).toUTCString() } : undefined),
    // An offering's successor may be `model@provider`: the link is to the model's entry.
    ...(n.successor ? { link: `</v1/models/${n.successor.split("@")[0]}>; rel="successor-version"` } : undefined),
  };
}
