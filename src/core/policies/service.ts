/**
 * Routing policies as use-cases: who sees which policy, who may change it, and what a policy
 * stores. A user sees their personal policies and every policy of an organization they are a
 * member of; anything else is 404, never 403, so a policy's existence does not leak. A
 * personal policy is changed by its creator only; an organization's by its creator and the
 * organization's owners and admins (403 for its other members). Every change is announced so
 * each instance's policy cache drops what it knew.
 */
import type { CatalogSnapshot } from "../catalog/types";
import { GatewayError, issue, text, ValidationFailure } from "../errors";
import type { PolicyConfig } from "../routing/config-schema";
import type { Policy, PolicyEntry, PolicyType } from "../routing/types";
import { normalizeConfig, normalizeEntries, type EntryInput } from "./normalize";
import type { PolicyPatch, PolicyStore } from "./ports";

export interface PolicyServiceDeps {
  store: PolicyStore;
  catalog: () => CatalogSnapshot;
  /** Tells every instance that this policy changed (their caches drop it). */
  changed: (policyId: string) => Promise<void>;
}

/** A new policy as the client describes it (`orgId` null: a personal policy). */
export interface PolicyDraft {
  slug: string;
  displayName: string;
  policyType: PolicyType;
  entries: readonly EntryInput[];
  config?: PolicyConfig | null;
  orgId: string | null;
  isActive?: boolean;
}

/**
 * A change as the client sends it. `slug` and `orgId` may be echoed unchanged (clients send
 * records back), never changed (422 at the field).
 */
export interface PolicyChange {
  displayName?: string;
  policyType?: PolicyType;
  entries?: readonly EntryInput[];
  config?: PolicyConfig;
  isActive?: boolean;
  slug?: string;
  orgId?: string | null;
}

const notFound = () =>
  new GatewayError("not_found", text("라우팅 정책를 찾을 수 없습니다.", "Routing policy not found."));

export class PolicyService {
  constructor(private deps: PolicyServiceDeps) {}

  list(userId: string): Promise<Policy[]> {
    return this.deps.store.listVisible(userId);
  }

  /** Creates a personal policy, or one of an organization the user is a member of (else 403). 409 on a taken slug. */
  async create(userId: string, draft: PolicyDraft): Promise<Policy> {
    if (draft.orgId && !(await this.deps.store.roleIn(draft.orgId, userId))) {
      throw new GatewayError(
        "org_membership_required",
        text(
          "이 조직의 멤버만 조직 정책을 만들 수 있습니다.",
          "Only members of this organization may create its policies.",
        ),
      );
    }
    const created = await this.deps.store.create({
      userId,
      orgId: draft.orgId,
      slug: draft.slug,
      displayName: draft.displayName,
      policyType: draft.policyType,
      ...this.check(draft),
      isActive: draft.isActive ?? true,
    });
    if (!created)
      throw new GatewayError(
        "conflict",
        text(
          `이미 같은 slug('${draft.slug}')의 정책이 있습니다.`,
          `A policy with the slug '${draft.slug}' already exists.`,
        ),
      );
    await this.deps.changed(created.id);
    return created;
  }

  /** The entries and config as creating the policy would store them (400 `invalid_policy_entry`), storing nothing. */
  check(draft: Pick<PolicyDraft, "entries" | "config">): { entries: PolicyEntry[]; config: PolicyConfig } {
    const snapshot = this.deps.catalog();
    return { entries: normalizeEntries(snapshot, draft.entries), config: normalizeConfig(snapshot, draft.config) };
  }

  /** The policy if the user may see it; 404 otherwise. */
  async visible(userId: string, policyId: string): Promise<Policy> {
    return (await this.access(userId, policyId)).policy;
  }

  /** Applies a change the user may make (403 otherwise); nothing sent, nothing changes. */
  async update(userId: string, policyId: string, change: PolicyChange): Promise<Policy> {
    const policy = await this.editable(userId, policyId);
    const issues = [];
    if (change.slug !== undefined && change.slug !== policy.slug)
      issues.push(issue(["body", "slug"], text("slug는 바꿀 수 없습니다.", "slug cannot change"), "immutable"));
    // An empty org_id is no organization; ids compare in lower case.
    if (change.orgId !== undefined && (change.orgId || null)?.toLowerCase() !== policy.orgId)
      issues.push(issue(["body", "org_id"], text("org_id는 바꿀 수 없습니다.", "org_id cannot change"), "immutable"));
    if (issues.length) throw new ValidationFailure(issues);
    const snapshot = this.deps.catalog();
    const patch: PolicyPatch = {
      ...(change.displayName !== undefined && { displayName: change.displayName }),
      ...(change.policyType !== undefined && { policyType: change.policyType }),
      ...(change.entries !== undefined && { entries: normalizeEntries(snapshot, change.entries) }),
      ...(change.config !== undefined && { config: normalizeConfig(snapshot, change.config) }),
      ...(change.isActive !== undefined && { isActive: change.isActive }),
    };
    if (!Object.keys(patch).length) return policy;
    const updated = await this.deps.store.update(policy.id, patch);
    if (!updated) throw notFound();
    await this.deps.changed(updated.id);
    return updated;
  }

  /** Deletes a policy the user may change (403 otherwise). */
  async delete(userId: string, policyId: string): Promise<void> {
    const policy = await this.editable(userId, policyId);
    if (!(await this.deps.store.delete(policy.id))) throw notFound();
    await this.deps.changed(policy.id);
  }

  /** The policy and the user's role in its organization (null for a personal policy or a non-member). */
  private async access(userId: string, policyId: string): Promise<{ policy: Policy; role: string | null }> {
    const policy = await this.deps.store.byId(policyId);
    if (!policy) throw notFound();
    const role = policy.orgId ? await this.deps.store.roleIn(policy.orgId, userId) : null;
    if (policy.userId !== userId && role === null) throw notFound();
    return { policy, role };
  }

  private async editable(userId: string, policyId: string): Promise<Policy> {
    const { policy, role } = await this.access(userId, policyId);
    if (policy.userId !== userId && role !== "owner" && role !== "admin") {
      throw new GatewayError(
        "forbidden",
        text(
          "조직 정책은 만든 사람과 조직의 owner·admin만 수정하거나 삭제할 수 있습니다.",
          "Only its creator and the organization's owners and admins may change or delete an organization policy.",
        ),
      );
    }
    return policy;
  }
}
