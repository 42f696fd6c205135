/** Who is calling: the authenticated subjects of the three credential kinds. */

/** Fixed literal prefixes: an API key and a management key can be told apart at a glance. */
export const API_KEY_PREFIX = "sk-gw-";
export const MGMT_KEY_PREFIX = "mk-gw-";
/** Characters of a secret kept for display (`key_prefix`). */
export const DISPLAY_PREFIX_LEN = 12;

export type KeyKind = "standard" | "delegated" | "byok";
export type CacheMode = "off" | "exact" | "semantic";
export type Scope = "chat" | "usage:read";

export interface UserFlags {
  id: string;
  email: string;
  regulated: boolean;
  xborderTrainingConsent: boolean;
}

/** An API key as the request path sees it (cached in memory). */
export interface KeyPrincipal {
  keyId: string;
  keyHash: string;
  kind: KeyKind;
  name: string;
  allowedModels: string[] | null;
  monthlyBudgetKrw: number | null;
  monthlyTokenLimit: number | null;
  expiresAt: Date | null;
  isActive: boolean;
  deleted: boolean;
  piiMaskingEnabled: boolean;
  responseCacheMode: CacheMode;
  /** Hedged requests on for this key's calls: the owner's setting, the only way to hedge (a request's `provider.hedge: false` turns it off). */
  hedge?: boolean;
  scopes: Scope[] | null;
  ipAllowlist: string[] | null;
  byokProvider: string | null;
  /** The provider credential sealed (lib/secret-box.ts): opened only to call the upstream. */
  byokSecretSealed: string | null;
  user: UserFlags & { deleted: boolean };
}

export interface MgmtPrincipal {
  mgmtKeyId: string;
  userId: string;
}
