/**
 * `/v1/routing-policies*` (dashboard JWT): create, list, read, update and delete routing
 * policies. Entries (and the config's judge and synthesis models) must be active, priced text
 * leaves of the catalog (400 `invalid_policy_entry`); the config DSL is a schema (422). Every
 * change is broadcast so each instance's policy cache drops what it knew.
 */
import { Elysia, t } from "elysia";
import { GatewayError, invalid, issue, text, ValidationFailure } from "../../core/errors";
import { checkPolicyEntryModel } from "../../core/catalog/resolve";
import type { CatalogSnapshot } from "../../core/catalog/types";
import { configModels, PolicyConfigSchema, type PolicyConfig } from "../../core/routing/config-schema";
import { POLICY_TYPES, type Policy, type PolicyEntry, type PolicyType } from "../../core/routing/types";
import type { PolicyRepo } from "../../db/repos/policies";
import type { UserRow } from "../../db/repos/users";
import type { AppDeps } from "../deps";
import { notFound, requireUuid } from "../params";
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
  policy_type: t.Union(POLICY_TYPES.map((p) => t.Literal(p))),
  entries: t.Array(EntrySchema, { minItems: 1, maxItems: 10 }),
  config: PolicyConfigSchema,
  is_active: t.Boolean(),
};

export const CreatePolicyBody = t.Object({
  slug: t.String({ pattern: SLUG, maxLength: 63 }),
  display_name: Fields.display_name,
  policy_type: Fields.policy_type,
  entries: Fields.entries,
  config: t.Optional(Fields.config),
  org_id: t.Optional(t.Union([t.String({ pattern: UUID_OR_EMPTY }), t.Null()])),
  is_active: t.Optional(Fields.is_active),
});

/** Only these change; `slug` and `org_id` may be sent unchanged (clients echoing a record), never changed. */
export const PatchPolicyBody = t.Object({
  display_name: t.Optional(Fields.display_name),
  policy_type: t.Optional(Fields.policy_type),
  entries: t.Optional(Fields.entries),
  config: t.Optional(Fields.config),
  is_active: t.Optional(Fields.is_active),
  slug: t.Optional(t.String()),
  org_id: t.Optional(t.Union([t.String(), t.Null()])),
});

type EntryBody = typeof EntrySchema.static;

export function toPolicyRecord(p: Policy) {
  return {
    id: p.id,
    slug: p.slug,
    display_name: p.displayName,
    policy_type: p.policyType,
    entries: p.entries.map((e) => ({ model: e.model, weight: e.weight ?? null, retries: e.retries })),
    config: p.config,
    org_id: p.orgId,
    created_by: p.userId,
    is_active: p.isActive,
    created_at: p.createdAt.toISOString(),
    updated_at: p.updatedAt.toISOString(),
  };
}

/** Entries as stored: models in canonical short form (vendor ids converted), retries defaulted. */
export function normalizeEntries(snapshot: CatalogSnapshot, entries: readonly EntryBody[]): PolicyEntry[] {
  return entries.map((e, i) => {
    const check = checkPolicyEntryModel(snapshot, e.model.trim());
    if (!check.ok) throw new GatewayError("invalid_policy_entry", text(`entries[${i}]: ${check.message.ko}`, `entries[${i}]: ${check.message.en}`));
    const model = check.pinnedProvider ? `${check.model.id}@${check.pinnedProvider}` : check.model.id;
    return { model, retries: e.retries ?? 0, ...(e.weight != null && { weight: e.weight }) };
  });
}

/** The config's own models (judge, synthesis) obey the entry rules; they are stored canonical too. */
export function normalizeConfig(snapshot: CatalogSnapshot, config: PolicyConfig | null | undefined): PolicyConfig {
  const c: PolicyConfig = structuredClone(config ?? {});
  for (const { path, model } of configModels(c)) {
    const check = checkPolicyEntryModel(snapshot, model.trim());
    if (!check.ok) throw new GatewayError("invalid_policy_entry", text(`${path}: ${check.message.ko}`, `${path}: ${check.message.en}`));
    const canonical = check.pinnedProvider ? `${check.model.id}@${check.pinnedProvider}` : check.model.id;
    if (path === "config.judge_model") c.judge_model = canonical;
    else if (typeof c.synthesis === "string") c.synthesis = canonical;
    else if (c.synthesis) c.synthesis.model = canonical;
  }
  return c;
}

export interface PolicyRouteDeps {
  policies: PolicyRepo;
  catalog: () => CatalogSnapshot;
}

export function policyRoutes(d: AppDeps, r: PolicyRouteDeps) {
  /** The policy if the user may see it (personal and theirs, or of one of their organizations); 404 otherwise. */
  const visible = async (user: UserRow, rawId: string): Promise<{ policy: Policy; role: string | null }> => {
    const policy = await r.policies.byId(requireUuid(rawId, "policy_id"));
    if (!policy) throw notFound("라우팅 정책");
    const role = policy.orgId ? await r.policies.roleIn(policy.orgId, user.id) : null;
    if (policy.userId !== user.id && role === null) throw notFound("라우팅 정책");
    return { policy, role };
  };
  /** Edit and delete: the creator, or an owner or admin of the policy's organization. */
  const editable = async (user: UserRow, rawId: string): Promise<Policy> => {
    const { policy, role } = await visible(user, rawId);
    if (policy.userId !== user.id && role !== "owner" && role !== "admin") {
      throw new GatewayError("forbidden", text("조직 정책은 만든 사람과 조직의 owner·admin만 수정하거나 삭제할 수 있습니다.", "Only its creator and the organization's owners and admins may change or delete an organization policy."));
    }
    return policy;
  };
  const changed = (id: string) => d.bus.publish({ t: "policy", id });
  const decisions = new ActivityRepo(d.db);

  return new Elysia({ name: "routing-policies", normalize: false })
    .get(
      "/v1/routing-policies",
      async ({ request }) => {
        const user = await d.auth.jwtUser(request);
        const items = (await r.policies.listVisible(user.id)).map(toPolicyRecord);
        return { items, total: items.length };
      },
      { detail: { security: AUTH.dashboard, tags: ["routing policies"], summary: "List your policies and your organizations' (newest first)", responses: ok(PolicyList) } },
    )
    .post(
      "/v1/routing-policies",
      async ({ request, body, set }) => {
        const user = await d.auth.jwtUser(request);
        const orgId = body.org_id ? body.org_id.toLowerCase() : null;
        if (orgId && !(await r.policies.roleIn(orgId, user.id))) throw new GatewayError("org_membership_required", text("이 조직의 멤버만 조직 정책을 만들 수 있습니다.", "Only members of this organization may create its policies."));
        const snapshot = r.catalog();
        const created = await r.policies.create({
          userId: user.id,
          orgId,
          slug: body.slug,
          displayName: body.display_name,
          policyType: body.policy_type as PolicyType,
          entries: normalizeEntries(snapshot, body.entries),
          config: normalizeConfig(snapshot, body.config),
          isActive: body.is_active ?? true,
        });
        if (!created) throw new GatewayError("conflict", text(`이미 같은 slug('${body.slug}')의 정책이 있습니다.`, `A policy with the slug '${body.slug}' already exists.`));
        await changed(created.id);
        set.status = 201;
        return toPolicyRecord(created);
      },
      { body: CreatePolicyBody, detail: { security: AUTH.dashboard, tags: ["routing policies"], summary: "Create a routing policy (201; 409 on a taken slug)", responses: { ...created(PolicyShape), ...errors(403, 409) } } },
    )
    .post(
      "/v1/routing-policies/validate",
      async ({ request, body }) => {
        await d.auth.jwtUser(request);
        // The create route's own checks (schema, then catalog models), without storing: for forms checked as they are typed.
        const snapshot = r.catalog();
        return { valid: true, entries: normalizeEntries(snapshot, body.entries), config: normalizeConfig(snapshot, body.config) };
      },
      {
        body: CreatePolicyBody,
        detail: {
          security: AUTH.dashboard,
          tags: ["routing policies"],
          summary: "Check a policy as creating it would (422 at the field, 400 invalid_policy_entry), storing nothing; 200 gives the entries and config as they would be stored",
          responses: ok(PolicyCheck),
        },
      },
    )
    .get(
      "/v1/routing-policies/:policy_id",
      async ({ request, params }) => {
        const user = await d.auth.jwtUser(request);
        return toPolicyRecord((await visible(user, params.policy_id)).policy);
      },
      { detail: { security: AUTH.dashboard, tags: ["routing policies"], summary: "Read one policy", responses: ok(PolicyShape) } },
    )
    .get(
      "/v1/routing-policies/:policy_id/decisions",
      async ({ request, params }) => {
        const user = await d.auth.jwtUser(request);
        const { policy } = await visible(user, params.policy_id);
        const raw = new URL(request.url).searchParams.getAll("limit");
        const limit = raw.length ? (raw.length === 1 && /^\d{1,3}$/.test(raw[0]!) ? Number(raw[0]) : NaN) : 20;
        if (!(limit >= 1 && limit <= 100)) throw invalid(["query", "limit"], text("1부터 100까지의 정수여야 합니다.", "Expected an integer from 1 to 100"), "int_parsing");
        return { object: "list", data: (await decisions.forPolicy(user.id, policy.slug, limit)).map(toActivity) };
      },
      {
        detail: {
          security: AUTH.dashboard,
          tags: ["routing policies"],
          summary: "Your latest calls through this policy, each with its X-Policy-Decision (newest first)",
          parameters: [{ name: "limit", in: "query", schema: { type: "integer", minimum: 1, maximum: 100, default: 20 } }],
          responses: ok(PolicyDecisions),
        },
      },
    )
    .patch(
      "/v1/routing-policies/:policy_id",
      async ({ request, params, body }) => {
        const user = await d.auth.jwtUser(request);
        const policy = await editable(user, params.policy_id);
        const issues = [];
        if (body.slug !== undefined && body.slug !== policy.slug) issues.push(issue(["body", "slug"], text("slug는 바꿀 수 없습니다.", "slug cannot change"), "immutable"));
        if (body.org_id !== undefined && (body.org_id || null)?.toLowerCase() !== policy.orgId) issues.push(issue(["body", "org_id"], text("org_id는 바꿀 수 없습니다.", "org_id cannot change"), "immutable"));
        if (issues.length) throw new ValidationFailure(issues);
        const snapshot = r.catalog();
        const patch = {
          ...(body.display_name !== undefined && { displayName: body.display_name }),
          ...(body.policy_type !== undefined && { policyType: body.policy_type as PolicyType }),
          ...(body.entries !== undefined && { entries: normalizeEntries(snapshot, body.entries) }),
          ...(body.config !== undefined && { config: normalizeConfig(snapshot, body.config) }),
          ...(body.is_active !== undefined && { isActive: body.is_active }),
        };
        if (!Object.keys(patch).length) return toPolicyRecord(policy); // nothing sent, nothing changes
        const updated = await r.policies.update(policy.id, patch);
        if (!updated) throw notFound("라우팅 정책");
        await changed(updated.id);
        return toPolicyRecord(updated);
      },
      { body: PatchPolicyBody, detail: { security: AUTH.dashboard, tags: ["routing policies"], summary: "Change display_name, policy_type, entries, config or is_active (slug is immutable)", responses: { ...ok(PolicyShape), ...errors(403) } } },
    )
    .delete(
      "/v1/routing-policies/:policy_id",
      async ({ request, params }) => {
        const user = await d.auth.jwtUser(request);
        const policy = await editable(user, params.policy_id);
        if (!(await r.policies.delete(policy.id))) throw notFound("라우팅 정책");
        await changed(policy.id);
        return { ok: true };
      },
      { detail: { security: AUTH.dashboard, tags: ["routing policies"], summary: "Delete a policy", responses: { ...ok(Deleted), ...errors(403) } } },
    );
}
