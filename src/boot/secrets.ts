/** The process's secrets: given in the environment, or generated once and kept in DATA_DIR. */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ConfigError, type Config } from "../config";
import type { Database } from "../db/client";
import { ByokKeyError, prepareByokSecrets } from "../db/repos/byok-secrets";
import { log } from "../lib/log";
import { SecretBox } from "../lib/secret-box";
import { randomToken } from "../lib/secrets";

/** A secret from the environment, or one generated once and kept in DATA_DIR. */
export function persistentSecret(
  cfg: Config,
  file: string,
  given: string | undefined,
  length: number,
  generate = () => randomToken(length),
): string {
  if (given) return given;
  mkdirSync(cfg.DATA_DIR, { recursive: true });
  const path = join(cfg.DATA_DIR, file);
  if (existsSync(path)) return readFileSync(path, "utf8").trim();
  const s = generate();
  writeFileSync(path, s, { mode: 0o600 });
  return s;
}

/**
 * The key sealing BYOK credentials: BYOK_ENCRYPTION_KEY, or in demo mode one generated into
 * DATA_DIR like the JWT secret; null outside demo mode without it (no BYOK key can be made).
 * Then every stored credential is checked against it and the clear ones sealed: a key that
 * cannot serve them stops the start here, with the reason.
 */
export async function byokBox(cfg: Config, db: Database): Promise<SecretBox | null> {
  const file = "byok-encryption-key";
  const text =
    cfg.BYOK_ENCRYPTION_KEY ??
    (cfg.demoMode ? persistentSecret(cfg, file, undefined, 0, SecretBox.generateText) : null);
  let box: SecretBox | null = null;
  try {
    box = text === null ? null : SecretBox.fromText(text);
  } catch {
    // The environment's value passed the schema; only a damaged generated file gets here.
    throw new ConfigError([`BYOK_ENCRYPTION_KEY: ${join(cfg.DATA_DIR, file)} does not hold a valid key`]);
  }
  try {
    const { sealed } = await prepareByokSecrets(db, box);
    if (sealed) log.info("BYOK credentials stored in clear were sealed", { count: sealed });
  } catch (e) {
    throw e instanceof ByokKeyError ? new ConfigError([e.message]) : e;
  }
  return box;
}
