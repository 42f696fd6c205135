/**
 * The start-time pass over stored BYOK provider credentials. It checks that the configured key
 * opens every sealed credential, so that a wrong or missing key stops the start (naming
 * BYOK_ENCRYPTION_KEY) instead of failing every BYOK call later, and only then seals the
 * credentials still stored in clear (rows from before encryption at rest). Idempotent: each
 * clear row is replaced only if it still holds the value read, so instances starting together
 * seal it once.
 */
import type { Database } from "../client";
import { byokContext, SecretBox } from "../../lib/secret-box";

/** The configured key cannot serve the stored credentials. */
export class ByokKeyError extends Error {}

export async function prepareByokSecrets(
  db: Database,
  box: SecretBox | null,
): Promise<{ stored: number; sealed: number }> {
  const rows = await db.query<{ id: string; s: string }>(
    "select id::text as id, byok_secret as s from api_keys where byok_secret is not null",
  );
  if (!rows.length) return { stored: 0, sealed: 0 };
  if (!box) {
    throw new ByokKeyError(
      `BYOK_ENCRYPTION_KEY is not set, but ${rows.length} BYOK credential(s) are stored: set the key they were sealed with ` +
        "(credentials still stored in clear are sealed with it at start)",
    );
  }
  let foreign = 0;
  for (const r of rows) {
    if (!SecretBox.isSealed(r.s)) continue;
    try {
      box.open(r.s, byokContext(r.id));
    } catch {
      foreign++;
    }
  }
  if (foreign)
    throw new ByokKeyError(
      `BYOK_ENCRYPTION_KEY does not open ${foreign} of the ${rows.length} stored BYOK credential(s): it is not the key they were sealed with`,
    );
  let sealed = 0;
  for (const r of rows) {
    if (SecretBox.isSealed(r.s)) continue;
    const done = await db.query(
      "update api_keys set byok_secret = $2 where id = $1 and byok_secret = $3 returning 1 as ok",
      [r.id, box.seal(r.s, byokContext(r.id)), r.s],
    );
    sealed += done.length;
  }
  return { stored: rows.length, sealed };
}
