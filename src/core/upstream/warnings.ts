/**
 * What an adapter could not send: a request setting its vendor does not take (Anthropic has no
 * `seed`, Gemini no `logit_bias`) or cannot take together with another (Anthropic's extended
 * thinking refuses `temperature`). Dropping it silently would let a client believe it applied;
 * the adapter reports it instead, shaped as the Vercel AI SDK's CallWarning, and the client
 * reads it in the `x-gateway-warnings` header (docs/providers.md).
 */
export interface CallWarning {
  type: "unsupported-setting";
  /** The request field, as the canonical request names it (`logit_bias`, `temperature`, a passthrough key). */
  setting: string;
  /** The provider the setting did not reach. */
  provider: string;
  /** Why, when it is not simply that the vendor has no such setting. */
  details?: string;
}

/** One setting a request builder left out, before it is known which provider was built for. */
export interface DroppedSetting {
  setting: string;
  details?: string;
}

export function unsupportedSettings(provider: string, dropped: readonly DroppedSetting[]): CallWarning[] {
  return dropped.map((d) => ({
    type: "unsupported-setting",
    setting: d.setting,
    provider,
    ...(d.details !== undefined && { details: d.details }),
  }));
}
