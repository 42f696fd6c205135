/**
 * Storage for routing feedback. Writing is one statement that checks ownership (the request
 * must be a usage event of this user) and replaces an earlier rating of the same request.
 */
import type { Database } from "../client";

export interface FeedbackRow {
  requestId: string;
  userId: string;
  rating: number;
  comment: string | null;
  category: string | null;
  model: string;
  provider: string | null;
  createdAt: Date;
  updatedAt: Date;
}

export interface FeedbackInput {
  requestId: string;
  userId: string;
  rating: -1 | 0 | 1;
  comment: string | null;
  category: string | null;
}

/** Ratings of one model, for the routing engine. */
export interface ModelFeedback {
  model: string;
  up: number;
  neutral: number;
  down: number;
  total: number;
}

interface RawRow {
  request_id: string;
  user_id: string;
  rating: number | string;
  comment: string | null;
  category: string | null;
  model: string;
  provider: string | null;
  created_at: Date | string;
  updated_at: Date | string;
}

const COLUMNS = "request_id, user_id, rating, comment, category, model, provider, created_at, updated_at";

export class FeedbackRepo {
  constructor(private db: Database) {}

  /** Stores (or replaces) the rating; null when the request is unknown or not the user's. */
  async upsert(f: FeedbackInput): Promise<FeedbackRow | null> {
    const rows = await this.db.query<RawRow>(
      `insert into response_feedback (request_id, user_id, rating, comment, category, model, provider)
       select e.request_id, e.user_id, $3, $4, $5, e.model, e.provider
         from usage_events e where e.request_id = $1 and e.user_id = $2
       on conflict (request_id) do update set
         rating = excluded.rating, comment = excluded.comment, category = excluded.category, updated_at = now()
       returning ${COLUMNS}`,
      [f.requestId, f.userId, f.rating, f.comment, f.category],
    );
    return rows[0] ? toRow(rows[0]) : null;
  }

  async get(requestId: string, userId: string): Promise<FeedbackRow | null> {
    const rows = await this.db.query<RawRow>(
      `select ${COLUMNS} from response_feedback where request_id = $1 and user_id = $2`,
      [requestId, userId],
    );
    return rows[0] ? toRow(rows[0]) : null;
  }

  /** Counts per model since a time (all users, or one user's own ratings). */
  async byModel(opts: { since: Date; userId?: string }): Promise<ModelFeedback[]> {
    const rows = await this.db.query<{
      model: string;
      up: string | number;
      neutral: string | number;
      down: string | number;
      total: string | number;
    }>(
      `select model,
              count(*) filter (where rating = 1) as up,
              count(*) filter (where rating = 0) as neutral,
              count(*) filter (where rating = -1) as down,
              count(*) as total
         from response_feedback
        where updated_at >= $1 and ($2::uuid is null or user_id = $2::uuid)
        group by model order by model`,
      [opts.since.toISOString(), opts.userId ?? null],
    );
    return rows.map((r) => ({
      model: r.model,
      up: Number(r.up),
      neutral: Number(r.neutral),
      down: Number(r.down),
      total: Number(r.total),
    }));
  }
}

function toRow(r: RawRow): FeedbackRow {
  return {
    requestId: r.request_id,
    userId: r.user_id,
    rating: Number(r.rating),
    comment: r.comment,
    category: r.category,
    model: r.model,
    provider: r.provider,
    createdAt: new Date(r.created_at),
    updatedAt: new Date(r.updated_at),
  };
}
