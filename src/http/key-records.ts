/**
 * Issuing and presenting keys, each record the static type of its schema
 * (src/surfaces/gateway/key-answers.ts). The full secret exists only in the creation response;
 * the database keeps its SHA-256 and a display prefix.
 */
import { GatewayError, issue, text, ValidationFailure, type Text, type ValidationIssue } from "../core/errors";
import { API_KEY_PREFIX, DISPLAY_PREFIX_LEN, MGMT_KEY_PREFIX, type CacheMode } from "../core/auth/principal";
import type { ApiKeyRow, KeyPatch, KeyRepo, MgmtKeyRow, NewApiKey } from "../db/repos/keys";
import { parseCidr } from "../lib/cidr";
import { randomToken, sha256Hex } from "../lib/secrets";
import type { KeyBody } from "../surfaces/gateway/key-schemas";
import type { KeyRecord, MgmtKeyRecord } from "../surfaces/gateway/key-answers";

function newSecret(prefix: string): { secret: string; hash: string; display: string } {
  const secret = prefix + randomToken(40);
  return { secret, hash: sha256Hex(secret), display: secret.slice(0, DISPLAY_PREFIX_LEN) };
}

export function toKeyRecord(row: ApiKeyRow, secret?: string): KeyRecord {
  return {
    id: row.id,
    name: row.name,
    key_prefix: row.keyPrefix,
    ...(secret !== undefined && { key: secret }),
    kind: row.kind,
    allowed_models: row.allowedModels ?? null,
    monthly_budget_krw: row.monthlyBudgetKrw ?? null,
    monthly_token_limit: row.monthlyTokenLimit ?? null,
    expires_at: row.expiresAt ? row.expiresAt.toISOString() : null,
    is_active: row.isActive,
    pii_masking_enabled: row.piiMaskingEnabled,
    // A text column, written only through the request schema's union (surfaces/gateway/key-schemas.ts).
    response_cache_mode: row.responseCacheMode as CacheMode,
    hedge: row.hedge,
    scopes: row.scopes ?? null,
    ip_allowlist: row.ipAllowlist ?? null,
    ...(row.byokProvider && { byok_provider: row.byokProvider }),
    // Which management key provisioned it (kept after that key is deleted), so the children of a
    // leaked management key can be found; null for keys made from the dashboard or by an operator.
    management_key_id: row.managementKeyId ?? null,
    created_at: row.createdAt.toISOString(),
    last_used_at: row.lastUsedAt ? row.lastUsedAt.toISOString() : null,
  };
}

export function toMgmtRecord(row: MgmtKeyRow, secret?: string): MgmtKeyRecord {
  return {
    id: row.id,
    name: row.name,
    key_prefix: row.keyPrefix,
    ...(secret !== undefined && { key: secret }),
    created_at: row.createdAt.toISOString(),
    last_used_at: row.lastUsedAt ? row.lastUsedAt.toISOString() : null,
  };
}

/** Checks the rules a schema cannot express and maps the wire body to a storage patch. */
export function keyPatchFromBody(body: KeyBody): KeyPatch {
  const issues: ValidationIssue[] = [];
  (body.ip_allowlist ?? []).forEach((e, i) => {
    if (!parseCidr(e))
      issues.push(
        issue(
          ["body", "ip_allowlist", i],
          text(`'${e}'은(는) IP 주소나 CIDR 범위가 아닙니다.`, `'${e}' is not an IP address or CIDR range`),
        ),
      );
  });
  let expiresAt: Date | null | undefined;
  if (body.expires_at !== undefined) {
    expiresAt = body.expires_at === null ? null : new Date(body.expires_at);
    if (expiresAt && Number.isNaN(expiresAt.getTime()))
      issues.push(issue(["body", "expires_at"], text("올바른 날짜·시간이 아닙니다.", "invalid datetime")));
  }
  if (issues.length) throw new ValidationFailure(issues);
  const p: KeyPatch = {};
  if (body.name !== undefined) p.name = body.name ?? "Default";
  if (body.allowed_models !== undefined) p.allowedModels = body.allowed_models?.length ? body.allowed_models : null;
  if (body.monthly_budget_krw !== undefined) p.monthlyBudgetKrw = body.monthly_budget_krw;
  if (body.monthly_token_limit !== undefined) p.monthlyTokenLimit = body.monthly_token_limit;
  if (expiresAt !== undefined) p.expiresAt = expiresAt;
  if (body.is_active !== undefined) p.isActive = body.is_active;
  if (body.pii_masking_enabled !== undefined) p.piiMaskingEnabled = body.pii_masking_enabled;
  if (body.response_cache_mode !== undefined) p.responseCacheMode = body.response_cache_mode;
  if (body.hedge !== undefined) p.hedge = body.hedge;
  if (body.scopes !== undefined) p.scopes = body.scopes === null ? null : [...new Set(body.scopes)];
  // Like allowed_models, an empty list means no restriction (null), not "no address at all".
  if (body.ip_allowlist !== undefined) p.ipAllowlist = body.ip_allowlist?.length ? body.ip_allowlist : null;
  return p;
}

/** 403 `key_limit_exceeded`: the account already has `cap` live keys of this kind. */
function keyLimit(cap: number, what: Text): GatewayError {
  return new GatewayError(
    "key_limit_exceeded",
    text(
      `계정당 ${what.ko}는 최대 ${cap}개입니다. 쓰지 않는 키를 삭제한 뒤 다시 시도하세요.`,
      `An account may have at most ${cap} live ${what.en}. Delete one you no longer use, then retry.`,
    ),
  );
}

/**
 * Issues an API key. `cap` (MAX_KEYS_PER_ACCOUNT; 0 = none): the account's live API keys,
 * whoever made them (dashboard, management key, operator), must stay under it.
 */
export async function issueApiKey(repo: KeyRepo, fields: Omit<NewApiKey, "keyHash" | "keyPrefix">, cap = 0) {
  const { secret, hash, display } = newSecret(API_KEY_PREFIX);
  const row = await repo.create({ ...fields, keyHash: hash, keyPrefix: display }, cap);
  if (!row) throw keyLimit(cap, text("API 키", "API keys"));
  return toKeyRecord(row, secret);
}

export async function issueMgmtKey(repo: KeyRepo, userId: string, name: string, cap = 0) {
  const { secret, hash, display } = newSecret(MGMT_KEY_PREFIX);
  const row = await repo.createMgmt(userId, name, hash, display, cap);
  if (!row) throw keyLimit(cap, text("관리 키", "management keys"));
  return toMgmtRecord(row, secret);
}
