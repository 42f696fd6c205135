/**
 * The account's calls as the console and `GET /v1/activity` read them: usage events newest
 * first, keyset-paginated on (created_at, id), and the daily aggregates of the overview.
 */
import type { Database } from "../client";

export interface ActivityFilter {
  userId: string;
  /** Only this key's calls (an API key reading its own activity, or the key_id filter). */
  keyId?: string;
  model?: string;
  /** Only this request id (search by the X-Request-Id a client saw). */
  requestId?: string;
  /** An exact status, or a class: 2xx (`success`) or anything else (`error`). */
  status?: number | "success" | "error";
  from?: Date;
  to?: Date;
  /** The id of the last row of the previous page. */
  afterId?: number;
  limit: number;
}

export interface ActivityRow {
  id: string;
  request_id: string;
  key_id: string | null;
  model: string;
  provider: string | null;
  modality: string;
  app: string | null;
  status: number;
  prompt_tokens: number;
  completion_tokens: number;
  cached_tokens: number;
  cache_write_tokens: number;
  cost_micro: string;
  fx_milli: string | null;
  latency_ms: number | null;
  cached: boolean;
  api: string | null;
  streamed: boolean | null;
  ttft_ms: number | null;
  error_code: string | null;
  policy_decision: string | null;
  created_at: Date | string;
}

const COLUMNS = `e.id, e.request_id, e.key_id, e.model, e.provider, e.modality, e.app, e.status, e.prompt_tokens,
  e.completion_tokens, e.cached_tokens, e.cache_write_tokens, e.cost_micro, e.fx_milli, e.latency_ms, e.cached, e.api, e.streamed,
  e.ttft_ms, e.error_code, e.policy_decision, e.created_at`;

export class ActivityRepo {
  constructor(private db: Database) {}

  /** One page, newest first; `limit + 1` rows are read so the caller knows whether more follow. */
  list(f: ActivityFilter): Promise<ActivityRow[]> {
    const where = ["e.user_id = $1"];
    const params: unknown[] = [f.userId];
    const add = (clause: (n: string) => string, value: unknown) => {
      params.push(value);
      where.push(clause(`$${params.length}`));
    };
    if (f.keyId) add((p) => `e.key_id = ${p}`, f.keyId);
    if (f.model) add((p) => `e.model = ${p}`, f.model);
    if (f.requestId) add((p) => `e.request_id = ${p}`, f.requestId);
    if (typeof f.status === "number") add((p) => `e.status = ${p}`, f.status);
    else if (f.status === "success") where.push("e.status between 200 and 299");
    else if (f.status === "error") where.push("(e.status < 200 or e.status > 299)");
    if (f.from) add((p) => `e.created_at >= ${p}`, f.from.toISOString());
    if (f.to) add((p) => `e.created_at < ${p}`, f.to.toISOString());
    // The cursor row's own timestamp, read in SQL: microseconds survive (a JS Date would not).
    if (f.afterId !== undefined)
      add(
        (p) =>
          `(e.created_at, e.id) < (select c.created_at, c.id from usage_events c where c.id = ${p} and c.user_id = $1)`,
        f.afterId,
      );
    params.push(f.limit + 1);
    return this.db.query<ActivityRow>(
      `select ${COLUMNS} from usage_events e where ${where.join(" and ")} order by e.created_at desc, e.id desc limit $${params.length}`,
      params,
    );
  }

  /** The account's latest calls through the policy `slug` (its decision names it: `<engine>; policy=<slug>; …`). */
  forPolicy(userId: string, slug: string, limit: number): Promise<ActivityRow[]> {
    return this.db.query<ActivityRow>(
      `select ${COLUMNS} from usage_events e
        where e.user_id = $1 and e.policy_decision is not null and split_part(split_part(e.policy_decision, '; policy=', 2), ';', 1) = $2
        order by e.created_at desc, e.id desc limit $3`,
      [userId, slug, limit],
    );
  }

  async one(userId: string, requestId: string, keyId?: string): Promise<ActivityRow | null> {
    const rows = await this.db.query<ActivityRow>(
      `select ${COLUMNS} from usage_events e where e.request_id = $1 and e.user_id = $2 and ($3::uuid is null or e.key_id = $3::uuid)`,
      [requestId, userId, keyId ?? null],
    );
    return rows[0] ?? null;
  }
}
