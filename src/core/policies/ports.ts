/** What the policy use-cases need from storage (SQL implementation: src/db/repos/policies.ts). */
import type { Policy } from "../routing/types";

/** A policy as created: everything but what the database assigns (id and times). */
export type NewPolicy = Omit<Policy, "id" | "createdAt" | "updatedAt">;

export type PolicyPatch = Partial<Pick<NewPolicy, "displayName" | "policyType" | "entries" | "config" | "isActive">>;

export interface PolicyStore {
  /** Null when the slug is taken (by this user, or in this organization). */
  create(policy: NewPolicy): Promise<Policy | null>;
  /** Personal policies of `userId` and those of their organizations, newest first. */
  listVisible(userId: string): Promise<Policy[]>;
  byId(id: string): Promise<Policy | undefined>;
  update(id: string, patch: PolicyPatch): Promise<Policy | undefined>;
  delete(id: string): Promise<boolean>;
  /** The user's role in an organization, or null when not a member. */
  roleIn(orgId: string, userId: string): Promise<string | null>;
}
