/** Organizations with their members, for the operator's list. */
import type { Database } from "../client";

export interface OrgRow {
  id: string;
  name: string;
  created_at: Date | string;
  members: { user_id: string; email: string; role: string; monthly_budget_krw: number | null }[] | null;
}

/** Newest first; members by role (owner, admin, member) then email. */
export function listOrgs(db: Database, limit: number): Promise<OrgRow[]> {
  return db.query<OrgRow>(
    `select o.id, o.name, o.created_at,
            (select json_agg(json_build_object('user_id', m.user_id, 'email', u.email, 'role', m.role, 'monthly_budget_krw', m.monthly_budget_krw)
                     order by case m.role when 'owner' then 0 when 'admin' then 1 else 2 end, u.email)
               from org_members m join users u on u.id = m.user_id where m.org_id = o.id) as members
       from orgs o order by o.created_at desc, o.id desc limit $1`,
    [limit],
  );
}
