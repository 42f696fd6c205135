/**
 * Lifecycle of one provider's offering (`deprecated_at`, `retires_at`, `successor` on an
 * `offerings[]` entry): a model can outlive one of its providers (DeepSeek retired its own
 * `deepseek-chat` while Together still serves DeepSeek V3), so the dates can be per offering.
 * The rules mirror the model's (verify-lifecycle.ts, checkLifecycle) and, like them, never depend on the
 * day: a successor must still be served on the day the offering retires.
 */
import type { CatalogFile, ModelEntry, OfferingEntry } from "./schema";
import type { CatalogProblem } from "./types";
import { isDay } from "./verify-lifecycle";

/** The day something stops being served: the earlier of its own and its model's retirement. */
function endOf(...days: (string | null | undefined)[]): string | null {
  const set = days.filter((d): d is string => typeof d === "string");
  return set.length === 0 ? null : set.sort()[0]!;
}

/** Every offering's lifecycle fields, against the file's models and offerings. */
export function checkOfferingLifecycles(file: CatalogFile): CatalogProblem[] {
  const out: CatalogProblem[] = [];
  const push = (kind: CatalogProblem["kind"], path: string, message: string) => out.push({ kind, path, message });
  const models = new Map<string, ModelEntry>(file.models.map((m) => [m.id, m]));
  const pairs = new Map<string, OfferingEntry>(file.offerings.map((o) => [`${o.model}@${o.provider}`, o]));
  file.offerings.forEach((o, i) => {
    const at = `offerings[${i}]`;
    const deprecated = o.deprecated_at ?? null;
    const retires = o.retires_at ?? null;
    const successor = o.successor ?? null;
    if (deprecated !== null && !isDay(deprecated))
      push("schema", `${at}.deprecated_at`, `"${deprecated}" is not a calendar date`);
    if (retires !== null && !isDay(retires)) push("schema", `${at}.retires_at`, `"${retires}" is not a calendar date`);
    if (deprecated !== null && retires !== null && retires < deprecated)
      push("schema", `${at}.retires_at`, `retires_at ${retires} is before deprecated_at ${deprecated}`);
    if (successor === null) return;
    const self = models.get(o.model);
    if (!self) return; // reported as an unknown model already
    const sat = `${at}.successor`;
    const ends = endOf(retires, self.retires_at);
    const [modelId, provider] = successor.split("@") as [string, string | undefined];
    const next = models.get(modelId);
    if (!next) return void push("reference", sat, `unknown model "${modelId}"`);
    if (next.kind !== "leaf" || !next.active || next.modality !== self.modality)
      return void push("reference", sat, `"${modelId}" is not an active ${self.modality} leaf`);
    if (provider !== undefined) {
      const target = pairs.get(successor);
      if (!target) return void push("reference", sat, `no offering ${successor}`);
      if (target === o) return void push("reference", sat, "an offering cannot be its own successor");
      const end = endOf(target.retires_at, next.retires_at);
      if (end !== null && (ends === null || end <= ends))
        push("reference", sat, `${successor} retires on ${end}, no later than ${o.model}@${o.provider} itself`);
      return;
    }
    // A model id: some offering of it (another provider, when it is this offering's own model) outlives this one.
    const lasting = file.offerings.some(
      (x) =>
        x.model === modelId &&
        x !== o &&
        (() => {
          const end = endOf(x.retires_at, next.retires_at);
          return end === null || (ends !== null && end > ends);
        })(),
    );
    if (!lasting) push("reference", sat, `"${modelId}" has no offering served past ${o.model}@${o.provider}`);
  });
  return out;
}
