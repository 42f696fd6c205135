/**
 * A policy's models as stored: entries (and the config's judge and synthesis models) must be
 * active, priced text leaves of the catalog (400 `invalid_policy_entry`), kept in canonical
 * short form (vendor ids converted) with retries defaulted.
 */
import { checkPolicyEntryModel } from "../catalog/resolve";
import type { CatalogSnapshot } from "../catalog/types";
import { GatewayError, text } from "../errors";
import { configModels, type PolicyConfig } from "../routing/config-schema";
import type { PolicyEntry } from "../routing/types";

/** An entry as a client sends it. */
export interface EntryInput {
  model: string;
  weight?: number | null;
  retries?: number | null;
}

export function normalizeEntries(snapshot: CatalogSnapshot, entries: readonly EntryInput[]): PolicyEntry[] {
  return entries.map((entry, index) => {
    const check = checkPolicyEntryModel(snapshot, entry.model.trim());
    if (!check.ok)
      throw new GatewayError(
        "invalid_policy_entry",
        text(`entries[${index}]: ${check.message.ko}`, `entries[${index}]: ${check.message.en}`),
      );
    const model = check.pinnedProvider ? `${check.model.id}@${check.pinnedProvider}` : check.model.id;
    return { model, retries: entry.retries ?? 0, ...(entry.weight != null && { weight: entry.weight }) };
  });
}

export function normalizeConfig(snapshot: CatalogSnapshot, config: PolicyConfig | null | undefined): PolicyConfig {
  const normalized: PolicyConfig = structuredClone(config ?? {});
  for (const { path, model } of configModels(normalized)) {
    const check = checkPolicyEntryModel(snapshot, model.trim());
    if (!check.ok)
      throw new GatewayError(
        "invalid_policy_entry",
        text(`${path}: ${check.message.ko}`, `${path}: ${check.message.en}`),
      );
    const canonical = check.pinnedProvider ? `${check.model.id}@${check.pinnedProvider}` : check.model.id;
    if (path === "config.judge_model") normalized.judge_model = canonical;
    else if (typeof normalized.synthesis === "string") normalized.synthesis = canonical;
    else if (normalized.synthesis) normalized.synthesis.model = canonical;
  }
  return normalized;
}
