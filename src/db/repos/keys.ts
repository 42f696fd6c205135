/** API key and management key storage. Secrets are stored only as SHA-256 hashes. */
import { and, count, desc, eq, isNull, sql } from "drizzle-orm";
import type { Database } from "../client";
import { apiKeys, managementKeys } from "../schema";
import type { CacheMode, KeyKind, KeyPrincipal, Scope } from "../../core/auth/principal";

export type ApiKeyRow = typeof apiKeys.$inferSelect;
export type MgmtKeyRow = typeof managementKeys.$inferSelect;

export interface NewApiKey {
  /** Set by the caller when the row's id must be known before the insert (a sealed BYOK credential is bound to it). */
  id?: string;
  userId: string;
  kind: KeyKind;
  keyHash: string;
  keyPrefix: string;
  managementKeyId?: string | null;
  name?: string;
  allowedModels?: string[] | null;
  monthlyBudgetKrw?: number | null;
  monthlyTokenLimit?: number | null;
  expiresAt?: Date | null;
  isActive?: boolean;
  piiMaskingEnabled?: boolean;
  responseCacheMode?: CacheMode;
  hedge?: boolean;
  scopes?: Scope[] | null;
  ipAllowlist?: string[] | null;
  byokProvider?: string | null;
  /** Sealed (lib/secret-box.ts), never the clear credential. */
  byokSecret?: string | null;
}

export type KeyPatch = Partial<
  Pick<
    NewApiKey,
    | "name"
    | "allowedModels"
    | "monthlyBudgetKrw"
    | "monthlyTokenLimit"
    | "expiresAt"
    | "isActive"
    | "piiMaskingEnabled"
    | "responseCacheMode"
    | "hedge"
    | "scopes"
    | "ipAllowlist"
  >
>;

/** One live key's counters for a month, with the limits they are measured against. */
export interface KeyMonthUsage {
  keyId: string;
  name: string;
  keyPrefix: string;
  spentMicro: bigint;
  heldMicro: bigint;
  tokens: number;
  requests: number;
  monthlyBudgetKrw: number | null;
  monthlyTokenLimit: number | null;
}

export class KeyRepo {
  constructor(private db: Database) {}

  /**
   * Inserts a key. With `cap` (> 0), only while the account has fewer live API keys than that:
   * null otherwise. The count and the insert run under a per-account lock, so concurrent
   * creations cannot pass the cap together.
   */
  async create(k: NewApiKey, cap = 0): Promise<ApiKeyRow | null> {
    const insert = (db: Pick<Database["orm"], "insert">) =>
      db
        .insert(apiKeys)
        .values({ ...k, name: k.name ?? "Default" })
        .returning();
    if (cap <= 0) return (await insert(this.db.orm))[0]!;
    return this.db.orm.transaction(async (tx) => {
      await tx.execute(sql`select pg_advisory_xact_lock(hashtext(${`keys:${k.userId}`}))`);
      const [live] = await tx
        .select({ n: count() })
        .from(apiKeys)
        .where(and(eq(apiKeys.userId, k.userId), isNull(apiKeys.deletedAt)));
      if (Number(live?.n ?? 0) >= cap) return null;
      return (await insert(tx))[0]!;
    });
  }

  async listForUser(userId: string): Promise<ApiKeyRow[]> {
    return this.db.orm
      .select()
      .from(apiKeys)
      .where(and(eq(apiKeys.userId, userId), isNull(apiKeys.deletedAt)))
      .orderBy(desc(apiKeys.createdAt));
  }

  async listForMgmtKey(mgmtKeyId: string): Promise<ApiKeyRow[]> {
    return this.db.orm
      .select()
      .from(apiKeys)
      .where(and(eq(apiKeys.managementKeyId, mgmtKeyId), isNull(apiKeys.deletedAt)))
      .orderBy(desc(apiKeys.createdAt));
  }

  async get(userId: string, id: string): Promise<ApiKeyRow | undefined> {
    const [row] = await this.db.orm
      .select()
      .from(apiKeys)
      .where(and(eq(apiKeys.id, id), eq(apiKeys.userId, userId), isNull(apiKeys.deletedAt)));
    return row;
  }

  async update(userId: string, id: string, patch: KeyPatch): Promise<ApiKeyRow | undefined> {
    const [row] = await this.db.orm
      .update(apiKeys)
      .set({ ...patch, updatedAt: new Date() })
      .where(and(eq(apiKeys.id, id), eq(apiKeys.userId, userId), isNull(apiKeys.deletedAt)))
      .returning();
    return row;
  }

  /** Soft delete: the key stops working at once; its usage history stays. */
  async softDelete(userId: string, id: string, mgmtKeyId?: string): Promise<boolean> {
    const conds = [eq(apiKeys.id, id), eq(apiKeys.userId, userId), isNull(apiKeys.deletedAt)];
    if (mgmtKeyId) conds.push(eq(apiKeys.managementKeyId, mgmtKeyId));
    const rows = await this.db.orm
      .update(apiKeys)
      .set({ deletedAt: new Date(), isActive: false })
      .where(and(...conds))
      .returning({ id: apiKeys.id });
    return rows.length > 0;
  }

  /** The principal behind a key hash (deleted keys included, so the caller can say why). */
  async principalByHash(hash: string): Promise<KeyPrincipal | null> {
    const rows = await this.db.query<Record<string, any>>(
      `select k.id, k.key_hash, k.kind, k.name, k.allowed_models, k.monthly_budget_krw, k.monthly_token_limit, k.expires_at,
              k.is_active, k.deleted_at, k.pii_masking_enabled, k.response_cache_mode, k.hedge, k.scopes, k.ip_allowlist,
              k.byok_provider, k.byok_secret, u.id as user_id, u.email, u.regulated, u.xborder_training_consent, u.deleted_at as user_deleted_at
         from api_keys k join users u on u.id = k.user_id where k.key_hash = $1`,
      [hash],
    );
    const row = rows[0];
    if (!row) return null;
    return {
      keyId: row.id,
      keyHash: row.key_hash,
      kind: row.kind,
      name: row.name,
      allowedModels: parseJson(row.allowed_models),
      monthlyBudgetKrw: row.monthly_budget_krw == null ? null : Number(row.monthly_budget_krw),
      monthlyTokenLimit: row.monthly_token_limit == null ? null : Number(row.monthly_token_limit),
      expiresAt: row.expires_at ? new Date(row.expires_at) : null,
      isActive: row.is_active,
      deleted: row.deleted_at != null,
      piiMaskingEnabled: row.pii_masking_enabled,
      responseCacheMode: row.response_cache_mode,
      hedge: row.hedge === true,
      scopes: parseJson(row.scopes),
      ipAllowlist: parseJson(row.ip_allowlist),
      byokProvider: row.byok_provider,
      byokSecretSealed: row.byok_secret,
      user: {
        id: row.user_id,
        email: row.email,
        regulated: row.regulated,
        xborderTrainingConsent: row.xborder_training_consent,
        deleted: row.user_deleted_at != null,
      },
    };
  }

  // Management keys

  /** Inserts a management key; with `cap` (> 0) only while the account has fewer live ones (else null). */
  async createMgmt(
    userId: string,
    name: string,
    keyHash: string,
    keyPrefix: string,
    cap = 0,
  ): Promise<MgmtKeyRow | null> {
    const insert = (db: Pick<Database["orm"], "insert">) =>
      db.insert(managementKeys).values({ userId, name, keyHash, keyPrefix }).returning();
    if (cap <= 0) return (await insert(this.db.orm))[0]!;
    return this.db.orm.transaction(async (tx) => {
      await tx.execute(sql`select pg_advisory_xact_lock(hashtext(${`mgmt:${userId}`}))`);
      const [live] = await tx
        .select({ n: count() })
        .from(managementKeys)
        .where(and(eq(managementKeys.userId, userId), isNull(managementKeys.deletedAt)));
      if (Number(live?.n ?? 0) >= cap) return null;
      return (await insert(tx))[0]!;
    });
  }

  async listMgmt(userId: string): Promise<MgmtKeyRow[]> {
    return this.db.orm
      .select()
      .from(managementKeys)
      .where(and(eq(managementKeys.userId, userId), isNull(managementKeys.deletedAt)))
      .orderBy(desc(managementKeys.createdAt));
  }

  /**
   * Soft-deletes a live management key of the user; with `cascade`, also the live keys it
   * provisioned, in the same transaction. Null when there was no such key; otherwise the ids of
   * the child keys deleted with it (none without `cascade`).
   */
  async deleteMgmt(
    userId: string,
    id: string,
    { cascade = false }: { cascade?: boolean } = {},
  ): Promise<{ children: string[] } | null> {
    return this.db.orm.transaction(async (tx) => {
      const now = new Date();
      const rows = await tx
        .update(managementKeys)
        .set({ deletedAt: now })
        .where(and(eq(managementKeys.id, id), eq(managementKeys.userId, userId), isNull(managementKeys.deletedAt)))
        .returning({ id: managementKeys.id });
      if (!rows.length) return null;
      if (!cascade) return { children: [] };
      const children = await tx
        .update(apiKeys)
        .set({ deletedAt: now, isActive: false, updatedAt: now })
        .where(and(eq(apiKeys.managementKeyId, id), eq(apiKeys.userId, userId), isNull(apiKeys.deletedAt)))
        .returning({ id: apiKeys.id });
      return { children: children.map((child) => child.id) };
    });
  }

  /** The account's live keys, newest first, each with its counters for `month` (zero without a row). */
  async monthlyUsage(userId: string, month: string): Promise<KeyMonthUsage[]> {
    const rows = await this.db.query<Record<string, unknown>>(
      `select k.id, k.name, k.key_prefix, k.monthly_budget_krw, k.monthly_token_limit,
              coalesce(m.spent_micro, 0) as spent_micro, coalesce(m.held_micro, 0) as held_micro,
              coalesce(m.tokens, 0) as tokens, coalesce(m.requests, 0) as requests
         from api_keys k left join key_monthly m on m.key_id = k.id and m.month = $2
        where k.user_id = $1 and k.deleted_at is null order by k.created_at desc`,
      [userId, month],
    );
    return rows.map((row) => ({
      keyId: String(row.id),
      name: String(row.name),
      keyPrefix: String(row.key_prefix),
      spentMicro: BigInt(row.spent_micro as string | number | bigint),
      heldMicro: BigInt(row.held_micro as string | number | bigint),
      tokens: Number(row.tokens),
      requests: Number(row.requests),
      monthlyBudgetKrw: row.monthly_budget_krw == null ? null : Number(row.monthly_budget_krw),
      monthlyTokenLimit: row.monthly_token_limit == null ? null : Number(row.monthly_token_limit),
    }));
  }

  /** A live management key by hash, with its owner not deleted; touches last_used_at. */
  async mgmtByHash(hash: string): Promise<{ id: string; userId: string } | null> {
    const rows = await this.db.query<{ id: string; user_id: string }>(
      `update management_keys m set last_used_at = now() from users u
        where m.key_hash = $1 and m.deleted_at is null and u.id = m.user_id and u.deleted_at is null
        returning m.id, m.user_id`,
      [hash],
    );
    return rows[0] ? { id: rows[0].id, userId: rows[0].user_id } : null;
  }
}

/** jsonb comes back parsed from postgres.js and PGlite alike; strings are tolerated. */
function parseJson<T>(v: unknown): T | null {
  if (v == null) return null;
  return (typeof v === "string" ? JSON.parse(v) : v) as T;
}
