/**
 * Routing policies in SQL, and the in-process cache the hot path reads them through.
 * Visibility: a user sees their personal policies and the policies of every organization
 * they are a member of. A call by slug prefers the personal policy, then the organizations'
 * (the oldest first).
 */
import { and, desc, eq, isNull, or, sql } from "drizzle-orm";
import type { Database } from "../client";
import { orgMembers, routingPolicies } from "../schema";
import type { PolicyConfig } from "../../core/routing/config-schema";
import type { NewPolicy, PolicyPatch, PolicyStore } from "../../core/policies/ports";
import type { PolicySource } from "../../core/routing/router";
import type { Policy, PolicyEntry, PolicyType } from "../../core/routing/types";

type Row = typeof routingPolicies.$inferSelect;

function toPolicy(row: Row): Policy {
  return {
    id: row.id,
    userId: row.userId,
    orgId: row.orgId,
    slug: row.slug,
    displayName: row.displayName,
    policyType: row.policyType as PolicyType,
    entries: row.entries as PolicyEntry[],
    config: (row.config ?? {}) as PolicyConfig,
    isActive: row.isActive,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
  };
}

export class PolicyRepo implements PolicyStore {
  constructor(private db: Database) {}

  /** Null when the slug is taken (by this user, or in this organization). */
  async create(policy: NewPolicy): Promise<Policy | null> {
    const rows = await this.db.orm.insert(routingPolicies).values(policy).onConflictDoNothing().returning();
    return rows[0] ? toPolicy(rows[0]) : null;
  }

  /** Personal policies of `userId` and those of their organizations, newest first. */
  async listVisible(userId: string): Promise<Policy[]> {
    const rows = await this.db.orm
      .select()
      .from(routingPolicies)
      .where(this.visibleTo(userId))
      .orderBy(desc(routingPolicies.createdAt), desc(routingPolicies.id));
    return rows.map(toPolicy);
  }

  async byId(id: string): Promise<Policy | undefined> {
    const [row] = await this.db.orm.select().from(routingPolicies).where(eq(routingPolicies.id, id));
    return row ? toPolicy(row) : undefined;
  }

  async update(id: string, patch: PolicyPatch): Promise<Policy | undefined> {
    const [row] = await this.db.orm
      .update(routingPolicies)
      .set({ ...patch, updatedAt: sql`now()` })
      .where(eq(routingPolicies.id, id))
      .returning();
    return row ? toPolicy(row) : undefined;
  }

  async delete(id: string): Promise<boolean> {
    const rows = await this.db.orm
      .delete(routingPolicies)
      .where(eq(routingPolicies.id, id))
      .returning({ id: routingPolicies.id });
    return rows.length > 0;
  }

  /** The policy a call `orch/<slug>` by `userId` means: personal first, then organizations' (oldest first). */
  async findForCall(userId: string, slug: string): Promise<Policy | null> {
    const [row] = await this.db.orm
      .select()
      .from(routingPolicies)
      .where(and(eq(routingPolicies.slug, slug), this.visibleTo(userId)))
      .orderBy(sql`(${routingPolicies.orgId} is null) desc`, routingPolicies.createdAt)
      .limit(1);
    return row ? toPolicy(row) : null;
  }

  /** The caller's role in an organization, or null when not a member. */
  async roleIn(orgId: string, userId: string): Promise<string | null> {
    const [row] = await this.db.orm
      .select({ role: orgMembers.role })
      .from(orgMembers)
      .where(and(eq(orgMembers.orgId, orgId), eq(orgMembers.userId, userId)));
    return row?.role ?? null;
  }

  private visibleTo(userId: string) {
    return or(
      and(isNull(routingPolicies.orgId), eq(routingPolicies.userId, userId)),
      sql`${routingPolicies.orgId} in (select ${orgMembers.orgId} from ${orgMembers} where ${orgMembers.userId} = ${userId})`,
    );
  }
}

/**
 * The hot path's view: `findForCall` answered from memory for a few seconds. Any policy change
 * (on any instance, through the invalidation bus) clears it, since one change can alter what a
 * slug means for every member of an organization; policy changes are rare, calls are not. The
 * short TTL bounds staleness from organization membership changes, which publish no event.
 */
export class CachedPolicySource implements PolicySource {
  private entries = new Map<string, { policy: Policy | null; until: number }>();
  private generation = 0;

  constructor(
    private repo: Pick<PolicyRepo, "findForCall">,
    private ttlMs = 5000,
    private maxEntries = 50_000,
  ) {}

  async findForCall(userId: string, slug: string): Promise<Policy | null> {
    const key = `${userId}\n${slug}`;
    const now = Date.now();
    const hit = this.entries.get(key);
    if (hit && hit.until > now) return hit.policy;
    const generation = this.generation;
    const policy = await this.repo.findForCall(userId, slug);
    // A change that landed while we read must not be overwritten by what we read before it.
    if (generation === this.generation) {
      if (this.entries.size >= this.maxEntries) this.entries.clear();
      this.entries.set(key, { policy, until: now + this.ttlMs });
    }
    return policy;
  }

  invalidateAll(): void {
    this.generation++;
    this.entries.clear();
  }
}
