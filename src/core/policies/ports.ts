/**
 * What the policy use-cases need from storage (SQL implementation: src/db/repos/policies.ts)
 * and from the rest of the process (telling every instance's policy cache that one changed).
 */
import type { PolicyConfig } from "../routing/config-schema";
import type { Policy, PolicyEntry, PolicyType } from "../routing/types";

export interface NewPolicy {
  userId: string;
  orgId: string | null;
  slug: string;
  displayName: string;
  policyType: PolicyType;
  entries: PolicyEntry[];
  config: PolicyConfig;
  isActive: boolean;
}

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
