/** Wire schemas of the key-management endpoints (the API key table of the specification). */
import { t } from "elysia";
import { Type } from "@sinclair/typebox";

const Nullable = <T extends import("@sinclair/typebox").TSchema>(s: T) => t.Union([s, t.Null()]);

export const KeyFields = {
  name: t.Optional(Nullable(t.String({ minLength: 1, maxLength: 100 }))),
  allowed_models: t.Optional(Nullable(t.Array(t.String({ minLength: 1, maxLength: 200 }), { maxItems: 500 }))),
  // TypeBox's own integer: Elysia's t.Integer also accepts numeric strings like "100".
  monthly_budget_krw: t.Optional(Nullable(Type.Integer({ minimum: 0, maximum: 1_000_000_000_000 }))),
  monthly_token_limit: t.Optional(Nullable(Type.Integer({ minimum: 0, maximum: 1_000_000_000_000 }))),
  expires_at: t.Optional(Nullable(t.String({ format: "date-time" }))),
  is_active: t.Optional(t.Boolean()),
  pii_masking_enabled: t.Optional(t.Boolean()),
  response_cache_mode: t.Optional(t.Union([t.Literal("off"), t.Literal("exact"), t.Literal("semantic")])),
  hedge: t.Optional(
    t.Boolean({
      description:
        "Hedged requests for this key's calls, the loser's input charged too (docs/hedging.md); a request's provider.hedge: false turns it off, and true is ignored on a key without it; default false",
    }),
  ),
  scopes: t.Optional(Nullable(t.Array(t.Union([t.Literal("chat"), t.Literal("usage:read")]), { maxItems: 2 }))),
  ip_allowlist: t.Optional(Nullable(t.Array(t.String({ minLength: 1, maxLength: 64 }), { maxItems: 100 }))),
};

export const CreateKeyBody = t.Object(KeyFields, { description: "Every field is optional." });
export const PatchKeyBody = t.Object(KeyFields, { description: "Only the fields sent change." });

/** Provisioned child keys: only `name` and `monthly_budget_krw`; anything else is 422. */
export const ChildKeyBody = t.Object(
  { name: KeyFields.name, monthly_budget_krw: KeyFields.monthly_budget_krw },
  { additionalProperties: false },
);

export const MgmtKeyBody = t.Object({ name: t.String({ minLength: 1, maxLength: 100 }) });

export type KeyBody = typeof CreateKeyBody.static;
