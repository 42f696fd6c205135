/**
 * `/v1/routing-policies*` (dashboard JWT): create, list, read, update and delete routing
 * policies. The handlers parse and encode; who sees and who may change a policy, and what a
 * policy stores, are the policy service's (src/core/policies/). The config DSL is a schema (422).
 */
import { Elysia, t } from "elysia";
import { invalid, text } from "../../core/errors";
import type { PolicyService } from "../../core/policies/service";
import { PolicyConfigSchema } from "../../core/routing/config-schema";
import { POLICY_TYPES, type Policy, type PolicyType } from "../../core/routing/types";
import type { AppDeps } from "../deps";
import { requireUuid } from "../params";
import { AUTH } from "../security";
import { created, errors, ok } from "../openapi/describe";
import { Deleted, Policy as PolicyShape, PolicyCheck, PolicyList } from "../openapi/shapes";
import { PolicyDecisions } from "../openapi/activity-shapes";
import { ActivityRepo } from "../../db/repos/activity";
import { toActivity } from "../activity/records";

const SLUG = "^[a-z0-9][a-z0-9-]{0,62}$";
const UUID_OR_EMPTY = "^([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})?$";

const EntrySchema = t.Object({
  model: t.String({ minLength: 1, maxLength: 100 }),
  weight: t.Optional(t.Union([t.Integer({ minimum: 1, maximum: 10000 }), t.Null()])),
  retries: t.Optional(t.Union([t.Integer({ minimum: 0, maximum: 3 }), t.Null()])),
});
const Fields = {
  display_name: t.String({ minLength: 1, maxLength: 100 }),
  policy_type: t.Union(POLICY_TYPES.map((type) => t.Literal(type))),
  entries: t.Array(EntrySchema, { minItems: 1, maxItems: 10 }),
  config: PolicyConfigSchema,
  is_active: t.Boolean(),
};

const CreatePolicyBody = t.Object({
  slug: t.String({ pattern: SLUG, maxLength: 63 }),
  display_name: Fields.display_name,
  policy_type: Fields.policy_type,
  entries: Fields.entries,
  config: t.Optional(Fields.config),
  org_id: t.Optional(t.Union([t.String({ pattern: UUID_OR_EMPTY }), t.Null()])),
  is_active: t.Optional(Fields.is_active),
});

/** Only these change; `slug` and `org_id` may be sent unchanged (clients echoing a record), never changed. */
const PatchPolicyBody = t.Object({
  display_name: t.Optional(Fields.display_name),
  policy_type: t.Optional(Fields.policy_type),
  entries: t.Optional(Fields.entries),
  config: t.Optional(Fields.config),
  is_active: t.Optional(Fields.is_active),
  slug: t.Optional(t.String()),
  org_id: t.Optional(t.Union([t.String(), t.Null()])),
});

function toPolicyRecord(policy: Policy) {
  return {
    id: policy.id,
    slug: policy.slug,
    display_name: policy.displayName,
    policy_type: policy.policyType,
    entries: policy.entries.map((entry) => ({
      model: entry.model,
      weight: entry.weight ?? null,
      retries: entry.retries,
    })),
    config: policy.config,
    org_id: policy.orgId,
    created_by: policy.userId,
    is_active: policy.isActive,
    created_at: policy.createdAt.toISOString(),
    updated_at: policy.updatedAt.toISOString(),
  };
}

export function policyRoutes(deps: AppDeps, policies: PolicyService) {
  const decisions = new ActivityRepo(deps.db);
  const policyId = (raw: string) => requireUuid(raw, "policy_id");

  return new Elysia({ name: "routing-policies", normalize: false })
    .get(
      "/v1/routing-policies",
      async ({ request }) => {
        const user = await deps.auth.jwtUser(request);
        const items = (await policies.list(user.id)).map(toPolicyRecord);
        return { items, total: items.length };
      },
      {
        detail: {
          security: AUTH.dashboard,
          tags: ["routing policies"],
          summary: "List your policies and your organizations' (newest first)",
          responses: ok(PolicyList),
        },
      },
    )
    .post(
      "/v1/routing-policies",
      async ({ request, body, set }) => {
        const user = await deps.auth.jwtUser(request);
        const created = await policies.create(user.id, {
          slug: body.slug,
          displayName: body.display_name,
          policyType: body.policy_type as PolicyType,
          entries: body.entries,
          config: body.config,
          orgId: body.org_id ? body.org_id.toLowerCase() : null,
          isActive: body.is_active,
        });
        set.status = 201;
        return toPolicyRecord(created);
      },
      {
        body: CreatePolicyBody,
        detail: {
          security: AUTH.dashboard,
          tags: ["routing policies"],
          summary: "Create a routing policy (201; 409 on a taken slug)",
          responses: { ...created(PolicyShape), ...errors(403, 409) },
        },
      },
    )
    .post(
      "/v1/routing-policies/validate",
      async ({ request, body }) => {
        await deps.auth.jwtUser(request);
        // The create route's own checks (schema, then catalog models), without storing: for forms checked as they are typed.
        return { valid: true, ...policies.check(body) };
      },
      {
        body: CreatePolicyBody,
        detail: {
          security: AUTH.dashboard,
          tags: ["routing policies"],
          summary:
            "Check a policy as creating it would (422 at the field, 400 invalid_policy_entry), storing nothing; 200 gives the entries and config as they would be stored",
          responses: ok(PolicyCheck),
        },
      },
    )
    .get(
      "/v1/routing-policies/:policy_id",
      async ({ request, params }) => {
        const user = await deps.auth.jwtUser(request);
        return toPolicyRecord(await policies.visible(user.id, policyId(params.policy_id)));
      },
      {
        detail: {
          security: AUTH.dashboard,
          tags: ["routing policies"],
          summary: "Read one policy",
          responses: ok(PolicyShape),
        },
      },
    )
    .get(
      "/v1/routing-policies/:policy_id/decisions",
      async ({ request, params }) => {
        const user = await deps.auth.jwtUser(request);
        const policy = await policies.visible(user.id, policyId(params.policy_id));
        const raw = new URL(request.url).searchParams.getAll("limit");
        const limit = raw.length ? (raw.length === 1 && /^\d{1,3}$/.test(raw[0]!) ? Number(raw[0]) : NaN) : 20;
        if (!(limit >= 1 && limit <= 100))
          throw invalid(
            ["query", "limit"],
            text("1부터 100까지의 정수여야 합니다.", "Expected an integer from 1 to 100"),
            "int_parsing",
          );
        return { object: "list", data: (await decisions.forPolicy(user.id, policy.slug, limit)).map(toActivity) };
      },
      {
        detail: {
          security: AUTH.dashboard,
          tags: ["routing policies"],
          summary: "Your latest calls through this policy, each with its X-Policy-Decision (newest first)",
          parameters: [
            { name: "limit", in: "query", schema: { type: "integer", minimum: 1, maximum: 100, default: 20 } },
          ],
          responses: ok(PolicyDecisions),
        },
      },
    )
    .patch(
      "/v1/routing-policies/:policy_id",
      async ({ request, params, body }) => {
        const user = await deps.auth.jwtUser(request);
        const updated = await policies.update(user.id, policyId(params.policy_id), {
          displayName: body.display_name,
          policyType: body.policy_type as PolicyType | undefined,
          entries: body.entries,
          config: body.config,
          isActive: body.is_active,
          slug: body.slug,
          orgId: body.org_id,
        });
        return toPolicyRecord(updated);
      },
      {
        body: PatchPolicyBody,
        detail: {
          security: AUTH.dashboard,
          tags: ["routing policies"],
          summary: "Change display_name, policy_type, entries, config or is_active (slug is immutable)",
          responses: { ...ok(PolicyShape), ...errors(403) },
        },
      },
    )
    .delete(
      "/v1/routing-policies/:policy_id",
      async ({ request, params }) => {
        const user = await deps.auth.jwtUser(request);
        await policies.delete(user.id, policyId(params.policy_id));
        return { ok: true };
      },
      {
        detail: {
          security: AUTH.dashboard,
          tags: ["routing policies"],
          summary: "Delete a policy",
          responses: { ...ok(Deleted), ...errors(403) },
        },
      },
    );
}
