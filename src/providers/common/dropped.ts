/** The one way adapters report the settings their request builder left out (core/upstream/warnings.ts). */
import type { CallContext } from "../../core/model/provider";
import { unsupportedSettings, type DroppedSetting } from "../../core/upstream/warnings";

/** A vendor request body and the settings of the canonical request it could not carry. */
export interface BuiltRequest {
  body: Record<string, unknown>;
  dropped: DroppedSetting[];
}

/** Hands the dropped settings to the caller (nothing when none was dropped), then the body to send. */
export function reported(ctx: CallContext, built: BuiltRequest): Record<string, unknown> {
  if (built.dropped.length) ctx.warn?.(unsupportedSettings(ctx.providerId, built.dropped));
  return built.body;
}

/** The settings of `req` among `keys` that are set: each dropped for the same reason. */
export function droppedIfSet(req: object, keys: readonly string[], details?: string): DroppedSetting[] {
  const set = req as Record<string, unknown>;
  return keys
    .filter((k) => set[k] !== undefined)
    .map((setting) => (details === undefined ? { setting } : { setting, details }));
}
