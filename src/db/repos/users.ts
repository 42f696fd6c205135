/** Accounts, organizations and top-ups. */
import { and, desc, eq, ilike, isNotNull, isNull, or, sql, type SQL } from "drizzle-orm";
import type { Database } from "../client";
import { orgMembers, orgs, users } from "../schema";

export type UserRow = typeof users.$inferSelect;

/** One page of the operator's account list: newest first, keyset-paginated. */
export interface UserListQuery {
  /** Part of an email (case-insensitive) or an exact account id. */
  search?: string;
  deleted?: boolean;
  /** Resume after this account (the last id of the previous page). */
  afterId?: string;
  limit: number;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** A LIKE pattern that matches `text` literally (its % and _ are not wildcards). */
const likeAnywhere = (text: string) => `%${text.replace(/[\\%_]/g, (c) => "\\" + c)}%`;

export class UserRepo {
  constructor(private db: Database) {}

  /** Creates an account; null when the email is taken. */
  async create(account: {
    email: string;
    passwordHash: string;
    industry: string;
    regulated: boolean;
  }): Promise<UserRow | null> {
    const { email, passwordHash, industry, regulated } = account;
    const rows = await this.db.orm
      .insert(users)
      .values({ email, passwordHash, industry, regulated })
      .onConflictDoNothing({ target: users.email })
      .returning();
    return rows[0] ?? null;
  }

  async byEmail(email: string): Promise<UserRow | undefined> {
    const [row] = await this.db.orm.select().from(users).where(eq(users.email, email));
    return row;
  }

  /** A live (not deleted) account. */
  async live(id: string): Promise<UserRow | undefined> {
    const [row] = await this.db.orm
      .select()
      .from(users)
      .where(and(eq(users.id, id), isNull(users.deletedAt)));
    return row;
  }

  /** A page of accounts (one row more than `limit` tells the caller there is a next page) and the filter's total. */
  async list(q: UserListQuery): Promise<{ rows: UserRow[]; total: number }> {
    const filters: SQL[] = [];
    const term = q.search?.trim();
    if (term)
      filters.push(
        UUID.test(term)
          ? or(eq(users.id, term.toLowerCase()), ilike(users.email, likeAnywhere(term)))!
          : ilike(users.email, likeAnywhere(term)),
      );
    if (q.deleted !== undefined) filters.push(q.deleted ? isNotNull(users.deletedAt) : isNull(users.deletedAt));
    const where = filters.length ? and(...filters) : undefined;
    // Compared in SQL, not through a JS Date: created_at has microseconds a Date would drop.
    const page = q.afterId
      ? and(
          where,
          sql`(${users.createdAt}, ${users.id}) < (select u.created_at, u.id from users u where u.id = ${q.afterId})`,
        )
      : where;
    const [rows, [count]] = await Promise.all([
      this.db.orm
        .select()
        .from(users)
        .where(page)
        .orderBy(desc(users.createdAt), desc(users.id))
        .limit(q.limit + 1),
      this.db.orm.select({ n: sql<number>`count(*)::int` }).from(users).where(where),
    ]);
    return { rows, total: Number(count?.n ?? 0) };
  }

  async byId(id: string): Promise<UserRow | undefined> {
    const [row] = await this.db.orm.select().from(users).where(eq(users.id, id));
    return row;
  }

  async patchFlags(
    id: string,
    patch: { regulated?: boolean; xborderTrainingConsent?: boolean; deleted?: boolean },
  ): Promise<UserRow | undefined> {
    const set: Partial<typeof users.$inferInsert> = {};
    if (patch.regulated !== undefined) set.regulated = patch.regulated;
    if (patch.xborderTrainingConsent !== undefined) set.xborderTrainingConsent = patch.xborderTrainingConsent;
    if (patch.deleted !== undefined) set.deletedAt = patch.deleted ? new Date() : null;
    if (Object.keys(set).length === 0) return this.byId(id);
    const [row] = await this.db.orm.update(users).set(set).where(eq(users.id, id)).returning();
    return row;
  }

  /** The account's credit not held by calls in flight (balance − held), micro-won; null for a missing account. */
  async freeCreditMicro(id: string): Promise<bigint | null> {
    const rows = await this.db.query<{ f: unknown }>(
      "select balance_micro - held_micro as f from users where id = $1 and deleted_at is null",
      [id],
    );
    const f = rows[0]?.f;
    return f == null ? null : BigInt(f as string);
  }

  /** Credits micro-won in one atomic step (balance + ledger entry); null for a missing account. */
  async topup(id: string, amountMicro: bigint, meta: Record<string, unknown>): Promise<bigint | null> {
    const rows = await this.db.query<{ b: unknown }>("select gw_topup($1, $2, $3::jsonb) as b", [
      id,
      amountMicro.toString(),
      JSON.stringify(meta),
    ]);
    const b = rows[0]?.b;
    return b == null ? null : BigInt(b as string);
  }

  /**
   * A top-up under an Idempotency-Key (gw_topup_once): credited once per key, atomically with
   * the key's record. `replay`: the same key and body came before (nothing credited now; the
   * balance right after that first top-up); `reused`: the key came with another body.
   */
  async topupOnce(
    idemKey: string,
    bodyHash: string,
    id: string,
    amountMicro: bigint,
    paidKrw: number,
    meta: Record<string, unknown>,
  ): Promise<{ state: "new" | "replay" | "reused" | "missing"; balanceMicro: bigint | null }> {
    const rows = await this.db.query<{ state: string; balance_micro: unknown }>(
      "select state, balance_micro from gw_topup_once($1, $2, $3, $4, $5, $6::jsonb)",
      [idemKey, bodyHash, id, amountMicro.toString(), String(paidKrw), JSON.stringify(meta)],
    );
    const r = rows[0]!;
    return {
      state: r.state as "new" | "replay" | "reused" | "missing",
      balanceMicro: r.balance_micro == null ? null : BigInt(r.balance_micro as string),
    };
  }

  async createOrg(name: string, ownerUserId: string): Promise<{ id: string; name: string }> {
    const [org] = await this.db.orm.insert(orgs).values({ name }).returning();
    await this.db.orm.insert(orgMembers).values({ orgId: org!.id, userId: ownerUserId, role: "owner" });
    return { id: org!.id, name: org!.name };
  }

  async orgExists(id: string): Promise<boolean> {
    const [row] = await this.db.orm.select({ id: orgs.id }).from(orgs).where(eq(orgs.id, id));
    return !!row;
  }

  /** Adds or updates a membership. */
  async upsertMember(orgId: string, userId: string, role: string, monthlyBudgetKrw: number | null) {
    const [row] = await this.db.orm
      .insert(orgMembers)
      .values({ orgId, userId, role, monthlyBudgetKrw })
      .onConflictDoUpdate({ target: [orgMembers.orgId, orgMembers.userId], set: { role, monthlyBudgetKrw } })
      .returning();
    return row!;
  }

  async membership(orgId: string, userId: string) {
    const [row] = await this.db.orm
      .select()
      .from(orgMembers)
      .where(and(eq(orgMembers.orgId, orgId), eq(orgMembers.userId, userId)));
    return row;
  }
}
