/**
 * The key-management endpoints' answer bodies (API keys, their monthly usage, management
 * keys), declared once: the encoders (src/http/key-records.ts, the key routes) return
 * `Static<>` of these schemas and the OpenAPI document shows them. The request bodies are in
 * ./key-schemas.ts.
 */
import { Type as T, type Static, type TSchema } from "@sinclair/typebox";
import { named } from "../../lib/named-schema";

const Nullable = <S extends TSchema>(s: S) => T.Union([s, T.Null()]);
const Id = T.String({ format: "uuid" });
const Time = T.String({ format: "date-time" });
const Krw = T.Number({ description: "Korean won" });
const listOf = <S extends TSchema>(name: string, item: S) =>
  named(name, T.Object({ items: T.Array(item), total: T.Integer({ minimum: 0 }) }));

export const KeyRecord = named(
  "ApiKey",
  T.Object({
    id: Id,
    name: T.String(),
    key_prefix: T.String(),
    key: T.Optional(T.String({ description: "The secret: only in the answer that created the key" })),
    kind: T.String({ description: "standard, delegated or byok" }),
    allowed_models: Nullable(T.Array(T.String())),
    monthly_budget_krw: Nullable(Krw),
    monthly_token_limit: Nullable(T.Integer()),
    expires_at: Nullable(Time),
    is_active: T.Boolean(),
    pii_masking_enabled: T.Boolean(),
    response_cache_mode: T.Union([T.Literal("off"), T.Literal("exact"), T.Literal("semantic")]),
    hedge: T.Boolean({ description: "Hedged requests for this key's calls, turned on by its owner (docs/hedging.md)" }),
    scopes: Nullable(T.Array(T.String())),
    ip_allowlist: Nullable(T.Array(T.String())),
    byok_provider: T.Optional(T.String()),
    management_key_id: Nullable(Id),
    created_at: Time,
    last_used_at: Nullable(Time),
  }),
);
export type KeyRecord = Static<typeof KeyRecord>;
export const KeyList = listOf("ApiKeyList", KeyRecord);
export type KeyList = Static<typeof KeyList>;
export const KeyUsage = named(
  "ApiKeyUsage",
  T.Object({
    month: T.String({ description: "YYYY-MM (UTC)" }),
    items: T.Array(
      T.Object({
        key_id: Id,
        name: T.String(),
        key_prefix: T.String(),
        spent_krw: Krw,
        held_krw: Krw,
        tokens: T.Integer(),
        requests: T.Integer(),
        monthly_budget_krw: Nullable(Krw),
        monthly_token_limit: Nullable(T.Integer()),
      }),
    ),
    total: T.Integer({ minimum: 0 }),
  }),
);
export type KeyUsage = Static<typeof KeyUsage>;

export const MgmtKeyRecord = named(
  "ManagementKey",
  T.Object({
    id: Id,
    name: T.String(),
    key_prefix: T.String(),
    key: T.Optional(T.String({ description: "The secret: only when created" })),
    created_at: Time,
    last_used_at: Nullable(Time),
  }),
);
export type MgmtKeyRecord = Static<typeof MgmtKeyRecord>;
export const MgmtKeyList = listOf("ManagementKeyList", MgmtKeyRecord);
export type MgmtKeyList = Static<typeof MgmtKeyList>;
