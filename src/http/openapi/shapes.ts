/**
 * Response bodies of the gateway's account, operator, policy and health endpoints, whose
 * encoders live with their routes, as documentation (the OpenAPI document's component schemas).
 * The model-calling dialects, the model list, video jobs and keys declare theirs in their
 * surfaces (the schemas files under src/surfaces), where the encoders take their types from
 * them. Nothing validates an answer in production; the OpenAPI test checks that every route
 * names one, that the answers of a tour match them and that a typed client compiles.
 */
import { Type as T, type TSchema } from "@sinclair/typebox";
import { named } from "./describe";

const Nullable = <S extends TSchema>(s: S) => T.Union([s, T.Null()]);
const Id = T.String({ format: "uuid" });
const Time = T.String({ format: "date-time" });
const Krw = T.Number({ description: "Korean won" });

export const Health = named("Health", T.Object({ status: T.Literal("ok") }));
export const Readiness = named(
  "Readiness",
  T.Object({ status: T.Union([T.Literal("ready"), T.Literal("unavailable")]), database: T.String() }),
);

export const SignupResult = named("SignupResult", T.Object({ user_id: Id, email: T.String() }));
export const Token = named(
  "AccessToken",
  T.Object({
    access_token: T.String(),
    token_type: T.Literal("bearer"),
    expires_in: T.Integer({ description: "Seconds" }),
    session_expires_at: T.Optional(
      T.String({
        format: "date-time",
        description: "With a console session (refresh cookie): when the sign-in ends at the latest",
      }),
    ),
  }),
);
export const Me = named(
  "Account",
  T.Object({
    user_id: Id,
    email: T.String(),
    balance_krw: Krw,
    held_krw: Krw,
    regulated: T.Boolean(),
    xborder_training_consent: T.Boolean(),
  }),
);

const listOf = (name: string, item: TSchema) =>
  named(name, T.Object({ items: T.Array(item), total: T.Integer({ minimum: 0 }) }));
export const Deleted = named(
  "Deleted",
  T.Object({
    ok: T.Literal(true),
    id: T.Optional(Id),
    deleted_key_ids: T.Optional(T.Array(Id, { description: "With cascade=true: the keys deleted with it" })),
  }),
);

export const Topup = named("Topup", T.Object({ paid_krw: Krw, fee_krw: Krw, credited_krw: Krw, balance_krw: Krw }));
export const Settings = named(
  "Settings",
  T.Record(T.String(), T.Boolean(), { description: "Operator switches such as `routing.policies_enabled`" }),
);
export const Org = named("Organization", T.Object({ org_id: Id, name: T.String() }));
export const OrgMember = named(
  "OrganizationMember",
  T.Object({
    org_id: Id,
    user_id: Id,
    role: T.Union([T.Literal("owner"), T.Literal("admin"), T.Literal("member")]),
    monthly_budget_krw: Nullable(Krw),
  }),
);

export const Policy = named(
  "RoutingPolicy",
  T.Object({
    id: Id,
    slug: T.String(),
    display_name: T.String(),
    policy_type: T.String(),
    entries: T.Array(T.Object({ model: T.String(), weight: Nullable(T.Integer()), retries: T.Integer() })),
    config: T.Object({}, { additionalProperties: true }),
    org_id: Nullable(Id),
    created_by: Id,
    is_active: T.Boolean(),
    created_at: Time,
    updated_at: Time,
  }),
);
export const PolicyList = listOf("RoutingPolicyList", Policy);
export const PolicyCheck = named(
  "RoutingPolicyCheck",
  T.Object({
    valid: T.Literal(true),
    entries: T.Array(T.Object({ model: T.String(), retries: T.Integer(), weight: T.Optional(T.Integer()) })),
    config: T.Record(T.String(), T.Unknown()),
  }),
);

export const AdminUserList = named(
  "AdminUserList",
  T.Object({
    object: T.Literal("list"),
    data: T.Array(
      T.Object({
        user_id: T.String({ format: "uuid" }),
        email: T.String(),
        balance_krw: T.Number(),
        held_krw: T.Number(),
        industry: T.String(),
        regulated: T.Boolean(),
        xborder_training_consent: T.Boolean(),
        deleted: T.Boolean(),
        deleted_at: Nullable(T.String({ format: "date-time" })),
        created_at: T.String({ format: "date-time" }),
      }),
    ),
    total: T.Integer({ description: "Accounts matching the filter, all pages" }),
    has_more: T.Boolean(),
    next_cursor: Nullable(T.String({ description: "Pass as `cursor` for the next page" })),
  }),
);
