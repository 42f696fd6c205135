/** The kinds of environment variable the schema is made of: bounded integers and booleans. */
import { Type as T } from "@sinclair/typebox";

export const Int = (min: number, max: number, def: number, description: string) =>
  T.Integer({ minimum: min, maximum: max, default: def, description });

/** The spellings every boolean variable accepts, in any case (`parseBool` reads them). */
export const BOOL_SPELLINGS = ["true", "false", "on", "off", "1", "0"] as const;
const BOOL_WORDS: Record<string, boolean> = { true: true, on: true, "1": true, false: false, off: false, "0": false };

/** A boolean variable: `true/false`, `on/off` or `1/0`, case-insensitive (see `parseBool`). */
export const Bool = (description: string, { default: def }: { default?: boolean } = {}) =>
  T.Boolean(def === undefined ? { description } : { default: def, description });

/** The boolean a variable's text means, or undefined when it is none of `BOOL_WORDS`. */
export function parseBool(text: string): boolean | undefined {
  return BOOL_WORDS[text.trim().toLowerCase()];
}
