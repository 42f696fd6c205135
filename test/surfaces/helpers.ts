/** The check of the surfaces' tests: where a value departs from its declared schema. */
import type { TSchema } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";

/** `path: message` per error of TypeBox's own check; empty when the value matches. */
export function departures(schema: TSchema, value: unknown): string[] {
  return [...Value.Errors(schema, value)].map((e) => `${e.path || "/"}: ${e.message}`);
}
