/**
 * The invariants of the books, checked with SQL against the database after a chaos run (or a
 * soak). Returns the totals and a list of violations (empty when the books balance).
 */
import type { Database } from "../../src/db/client";

export interface Books {
  users: number;
  topupsKrw: number;
  chargesKrw: number;
  usageCostKrw: number;
  settledHolds: number;
  releasedHolds: number;
  openHolds: number;
  usageEvents: number;
  videoJobs: Record<string, number>;
  violations: string[];
}

const krw = (micro: unknown) => Number(BigInt(String(micro ?? 0))) / 1e6;

export async function checkBooks(db: Database, userIds: string[], acceptedJobs: string[] = []): Promise<Books> {
  const violations: string[] = [];
  const v = (what: string, rows: unknown[]) => {
    if (rows.length)
      violations.push(
        `${what}: ${JSON.stringify(rows.slice(0, 5), (_k, x) => (typeof x === "bigint" ? x.toString() : x))}${rows.length > 5 ? ` (+${rows.length - 5})` : ""}`,
      );
  };
  const ids = userIds;

  // 1. Every balance equals its top-ups minus its charges (the ledger entries).
  v(
    "balance != top-ups - charges",
    await db.query(
      `select u.id, u.balance_micro::text as balance, coalesce(sum(l.amount_micro), 0)::text as ledger
         from users u left join ledger_entries l on l.user_id = u.id
        where u.id = any($1::uuid[]) group by u.id having u.balance_micro <> coalesce(sum(l.amount_micro), 0)`,
      [ids],
    ),
  );
  // 2. The sum of charges equals the sum of usage-event costs, per user, and each charge is its
  //    hold's charged amount (a charge never exceeds its hold).
  v(
    "charges != usage-event costs",
    await db.query(
      `select u.id,
              (select coalesce(-sum(amount_micro), 0) from ledger_entries where user_id = u.id and kind = 'charge')::text as charges,
              (select coalesce(sum(cost_micro), 0) from usage_events where user_id = u.id)::text as usage
         from users u where u.id = any($1::uuid[])
        and (select coalesce(-sum(amount_micro), 0) from ledger_entries where user_id = u.id and kind = 'charge')
            <> (select coalesce(sum(cost_micro), 0) from usage_events where user_id = u.id)`,
      [ids],
    ),
  );
  v(
    "charge != its hold's charged amount, or above the hold",
    await db.query(
      `select l.request_id, -l.amount_micro as charge, h.charged_micro, h.amount_micro, h.status
         from ledger_entries l left join holds h on h.id = l.request_id
        where l.kind = 'charge' and l.user_id = any($1::uuid[]) and not (coalesce(l.meta, '{}') ? 'lease')
          and (h.id is null or h.status <> 'settled' or h.charged_micro <> -l.amount_micro or -l.amount_micro > h.amount_micro)`,
      [ids],
    ),
  );
  //    A call held against a credit lease is charged against the lease (its entry names it):
  //    each lease's charged amount is the sum of its calls' charges.
  v(
    "lease charged amount != its calls' charges",
    await db.query(
      `select h.id, h.charged_micro, coalesce(c.s, 0) as calls
         from holds h left join (select (meta->>'lease')::uuid as lease, -sum(amount_micro) as s from ledger_entries
                                  where kind = 'charge' and meta ? 'lease' group by 1) c on c.lease = h.id
        where h.lease and h.user_id = any($1::uuid[]) and coalesce(h.charged_micro, 0) <> coalesce(c.s, 0)`,
      [ids],
    ),
  );
  // 3. Nothing held: no open hold, no held amount left on an account or a key month.
  v(
    "open holds",
    await db.query(
      `select id, user_id, amount_micro, expires_at from holds where status = 'open' and user_id = any($1::uuid[])`,
      [ids],
    ),
  );
  v(
    "held amount left on an account",
    await db.query(`select id, held_micro from users where held_micro <> 0 and id = any($1::uuid[])`, [ids]),
  );
  v(
    "key month counters != their charges",
    await db.query(
      `select m.key_id, m.spent_micro, m.held_micro, m.held_tokens, coalesce(c.s, 0) as charges
         from key_monthly m join api_keys k on k.id = m.key_id
         left join (select h.key_id, h.month, sum(h.charged_micro) as s from holds h where h.status = 'settled' group by 1, 2) c on c.key_id = m.key_id and c.month = m.month
        where k.user_id = any($1::uuid[]) and (m.held_micro <> 0 or m.held_tokens <> 0 or m.spent_micro <> coalesce(c.s, 0))`,
      [ids],
    ),
  );
  // 4. No request id charged twice (the unique index says so; this checks it was not bypassed).
  v(
    "request charged twice",
    await db.query(
      `select request_id, count(*) from ledger_entries where kind = 'charge' and request_id is not null group by 1 having count(*) > 1`,
    ),
  );
  // 5. Every accepted video job is final, and its money moved once, the way its status says.
  v(
    "accepted job missing",
    await db.query(`select j from unnest($1::uuid[]) j where j not in (select id from video_jobs)`, [acceptedJobs]),
  );
  v(
    "video job not final, or its hold does not match its status",
    await db.query(
      `select j.id, j.status, h.status as hold, j.cost_micro, h.charged_micro
         from video_jobs j left join holds h on h.id = j.id
        where j.user_id = any($1::uuid[]) and (
              j.status = 'processing' or j.finished_at is null or h.id is null
           or (j.status = 'succeeded' and (h.status <> 'settled' or h.charged_micro is distinct from j.cost_micro))
           or (j.status in ('failed', 'canceled') and h.status <> 'released'))`,
      [ids],
    ),
  );

  const [t] = await db.query<Record<string, unknown>>(
    `select (select coalesce(sum(amount_micro), 0) from ledger_entries where kind = 'topup' and user_id = any($1::uuid[]))::text as topups,
            (select coalesce(-sum(amount_micro), 0) from ledger_entries where kind = 'charge' and user_id = any($1::uuid[]))::text as charges,
            (select coalesce(sum(cost_micro), 0) from usage_events where user_id = any($1::uuid[]))::text as usage,
            (select count(*) from usage_events where user_id = any($1::uuid[]))::int as events,
            (select count(*) from holds where status = 'settled' and user_id = any($1::uuid[]))::int as settled,
            (select count(*) from holds where status = 'released' and user_id = any($1::uuid[]))::int as released,
            (select count(*) from holds where status = 'open' and user_id = any($1::uuid[]))::int as open`,
    [ids],
  );
  const jobs = await db.query<{ status: string; n: number }>(
    `select status, count(*)::int as n from video_jobs where user_id = any($1::uuid[]) group by 1`,
    [ids],
  );
  return {
    users: ids.length,
    topupsKrw: krw(t!.topups),
    chargesKrw: krw(t!.charges),
    usageCostKrw: krw(t!.usage),
    settledHolds: Number(t!.settled),
    releasedHolds: Number(t!.released),
    openHolds: Number(t!.open),
    usageEvents: Number(t!.events),
    videoJobs: Object.fromEntries(jobs.map((j) => [j.status, j.n])),
    violations,
  };
}
