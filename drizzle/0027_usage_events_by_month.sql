-- Usage events partitioned by month (docs/decisions.md #62). PostgreSQL keeps a partitioned
-- table's unique keys per partition (they must include the partition key), so
-- `usage_events.request_id` can no longer refuse a second charge of a call; that receipt moves:
-- - a held call is closed once by its hold's status (gw_settle, gw_settle_many, gw_release), so
--   its usage event needs no arbiter;
-- - a leased call's receipt becomes its ledger entry (`ledger_entries.request_id` is unique and
--   the ledger is never partitioned nor pruned): the entry is written first, free calls too, and
--   the usage event only for a call whose entry was new.
-- Monthly partitions are named usage_events_yYYYYmMM (UTC months); a DEFAULT partition takes
-- rows outside them. gw_usage_upkeep creates the months ahead and drops those past retention.
ALTER TABLE "usage_events" RENAME TO "usage_events_flat";
--> statement-breakpoint
ALTER TABLE "usage_events_flat" RENAME CONSTRAINT "usage_events_pkey" TO "usage_events_flat_pkey";
--> statement-breakpoint
ALTER TABLE "usage_events_flat" RENAME CONSTRAINT "usage_events_request_id_unique" TO "usage_events_flat_request_id_unique";
--> statement-breakpoint
ALTER INDEX "usage_events_created_idx" RENAME TO "usage_events_flat_created_idx";
--> statement-breakpoint
ALTER INDEX "usage_events_user_idx" RENAME TO "usage_events_flat_user_idx";
--> statement-breakpoint
ALTER INDEX "usage_events_key_idx" RENAME TO "usage_events_flat_key_idx";
--> statement-breakpoint
CREATE TABLE "usage_events" (LIKE "usage_events_flat" INCLUDING DEFAULTS) PARTITION BY RANGE ("created_at");
--> statement-breakpoint
ALTER SEQUENCE "usage_events_id_seq" OWNED BY "usage_events"."id";
--> statement-breakpoint
ALTER TABLE "usage_events" ADD CONSTRAINT "usage_events_pkey" PRIMARY KEY ("id", "created_at");
--> statement-breakpoint
-- Lookups by request id (feedback, activity search): one index probe per partition. No index
-- on created_at alone: no reader filters by time without an account or key, a time range
-- prunes whole partitions, and retention drops them; one index entry fewer per call.
CREATE INDEX "usage_events_request_idx" ON "usage_events" ("request_id");
--> statement-breakpoint
CREATE INDEX "usage_events_user_idx" ON "usage_events" ("user_id", "created_at");
--> statement-breakpoint
CREATE INDEX "usage_events_key_idx" ON "usage_events" ("key_id", "created_at");
--> statement-breakpoint
CREATE TABLE "usage_events_default" PARTITION OF "usage_events" DEFAULT;
--> statement-breakpoint
-- The partition of the UTC month holding p_at, made if missing; rows of that month that went to
-- the DEFAULT partition meanwhile move into it. True when it was made.
CREATE FUNCTION gw_usage_partition(p_at timestamptz) RETURNS boolean
LANGUAGE plpgsql AS $$
DECLARE
  lo timestamptz := date_trunc('month', p_at, 'UTC');
  hi timestamptz := date_trunc('month', p_at, 'UTC') + interval '1 month';
  part text := 'usage_events_' || to_char(date_trunc('month', p_at, 'UTC') AT TIME ZONE 'UTC', '"y"YYYY"m"MM');
BEGIN
  IF to_regclass(part) IS NOT NULL THEN RETURN false; END IF;
  -- No row of the month may reach the DEFAULT partition between the move and the attach.
  LOCK TABLE usage_events_default IN SHARE ROW EXCLUSIVE MODE;
  EXECUTE format('CREATE TABLE %I (LIKE usage_events INCLUDING DEFAULTS)', part);
  EXECUTE format('WITH moved AS (DELETE FROM usage_events_default WHERE created_at >= $1 AND created_at < $2 RETURNING *) '
    'INSERT INTO %I SELECT * FROM moved', part) USING lo, hi;
  EXECUTE format('ALTER TABLE usage_events ATTACH PARTITION %I FOR VALUES FROM (%L) TO (%L)', part, lo, hi);
  RETURN true;
END $$;
--> statement-breakpoint
-- Housekeeping, run by every instance at start and hourly (one at a time: the advisory lock):
-- the partitions of this month and the p_ahead next ones exist; with p_keep_months > 0 the
-- months wholly before the current one's start less p_keep_months are dropped, except where the
-- stats rollup has not folded them yet (an event above its watermark). Returns what it did.
CREATE FUNCTION gw_usage_upkeep(p_keep_months int, p_ahead int) RETURNS jsonb
LANGUAGE plpgsql AS $$
DECLARE
  made text[] := '{}';
  gone text[] := '{}';
  kept text[] := '{}';
  cut timestamptz := date_trunc('month', now(), 'UTC') - make_interval(months => greatest(p_keep_months, 0));
  mark bigint;
  p record;
BEGIN
  PERFORM pg_advisory_xact_lock(hashtext('gw_usage_upkeep'));
  FOR i IN 0..greatest(p_ahead, 0) LOOP
    IF gw_usage_partition(now() + make_interval(months => i)) THEN
      made := made || to_char(date_trunc('month', now() + make_interval(months => i), 'UTC') AT TIME ZONE 'UTC', 'YYYY-MM');
    END IF;
  END LOOP;
  IF p_keep_months > 0 THEN
    -- A database whose rollup never ran has nothing to wait for.
    SELECT max(watermark) INTO mark FROM stats_rollup_state;
    FOR p IN
      SELECT c.relname, to_timestamp(substr(c.relname, 15, 4) || substr(c.relname, 20, 2), 'YYYYMM') AT TIME ZONE 'UTC' AS lo
        FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
       WHERE i.inhparent = 'usage_events'::regclass AND c.relname ~ '^usage_events_y[0-9]{4}m[0-9]{2}$'
       ORDER BY 2
    LOOP
      CONTINUE WHEN p.lo + interval '1 month' > cut;
      IF mark IS NOT NULL AND EXISTS (SELECT 1 FROM usage_events WHERE created_at >= p.lo AND created_at < p.lo + interval '1 month' AND id > mark) THEN
        kept := kept || p.relname::text;
        CONTINUE;
      END IF;
      EXECUTE format('DROP TABLE %I', p.relname);
      gone := gone || p.relname::text;
    END LOOP;
    DELETE FROM usage_events_default WHERE created_at < cut AND (mark IS NULL OR id <= mark);
  END IF;
  RETURN jsonb_build_object('made', to_jsonb(made), 'dropped', to_jsonb(gone), 'waiting_for_rollup', to_jsonb(kept));
END $$;
--> statement-breakpoint
-- Partitions for every month the existing events span, then the events, then the old table.
SELECT gw_usage_partition(m) FROM (SELECT DISTINCT date_trunc('month', created_at, 'UTC') AS m FROM usage_events_flat) months;
--> statement-breakpoint
SELECT gw_usage_upkeep(0, 2);
--> statement-breakpoint
INSERT INTO usage_events SELECT * FROM usage_events_flat;
--> statement-breakpoint
DROP TABLE "usage_events_flat";
--> statement-breakpoint
CREATE OR REPLACE FUNCTION gw_insert_usage(p_id uuid, p_user uuid, p_key uuid, p_cost bigint, p_event jsonb)
 RETURNS void
 LANGUAGE plpgsql
AS $function$
BEGIN
  INSERT INTO usage_events (request_id, user_id, key_id, model, provider, maker, modality, app, status,
    prompt_tokens, completion_tokens, cached_tokens, cache_write_tokens, cost_micro, fx_milli, latency_ms, cached,
    api, streamed, ttft_ms, error_code, policy_decision)
  SELECT p_id, p_user, p_key, coalesce(e.model, 'unknown'), e.provider, e.maker, coalesce(e.modality, 'text'), e.app,
    coalesce(e.status, 200), coalesce(e.prompt_tokens, 0), coalesce(e.completion_tokens, 0), coalesce(e.cached_tokens, 0),
    coalesce(e.cache_write_tokens, 0), p_cost, e.fx_milli, e.latency_ms, coalesce(e.cached, false),
    e.api, e.streamed, e.ttft_ms, e.error_code, e.policy_decision
  FROM jsonb_to_record(p_event) AS e(model text, provider text, maker text, modality text, app text, status int,
    prompt_tokens int, completion_tokens int, cached_tokens int, cache_write_tokens int, fx_milli bigint, latency_ms int, cached boolean,
    api text, streamed boolean, ttft_ms int, error_code text, policy_decision text);
END $function$;

--> statement-breakpoint
CREATE OR REPLACE FUNCTION gw_settle_many(p_id uuid[], p_cost bigint[], p_tokens bigint[], p_event jsonb[])
 RETURNS TABLE(n integer, r text)
 LANGUAGE plpgsql
 SET enable_seqscan TO 'off'
AS $function$
#variable_conflict use_column
BEGIN
  PERFORM 1 FROM users WHERE id IN (SELECT h.user_id FROM holds h WHERE h.id = ANY(p_id)) ORDER BY id FOR UPDATE;
  IF (SELECT count(DISTINCT x) FROM unnest(p_id) AS x) <> cardinality(p_id) THEN
    RETURN QUERY
      SELECT t.n::int, gw_settle(t.id, t.c, t.tk, t.e)
        FROM unnest(p_id, p_cost, p_tokens, p_event) WITH ORDINALITY AS t(id, c, tk, e, n)
        ORDER BY t.n;
    RETURN;
  END IF;
  RETURN QUERY
  WITH input AS (
    SELECT * FROM unnest(p_id, p_cost, p_tokens, p_event) WITH ORDINALITY AS t(id, c, tk, e, n)
  ), closed AS (
    -- charged_micro is the capped charge; RETURNING reads the row as updated.
    UPDATE holds h SET status = 'settled', charged_micro = greatest(0, least(i.c, h.amount_micro)), closed_at = now()
      FROM input i
      WHERE h.id = i.id AND h.closed_at IS NULL
      RETURNING h.id, h.user_id, h.key_id, h.org_ids, h.month, h.amount_micro, h.tokens AS held_tokens, h.charged_micro AS c, i.c AS asked, i.tk, i.e
  ), users_moved AS (
    UPDATE users SET held_micro = users.held_micro - s.a, balance_micro = users.balance_micro - s.c
      FROM (SELECT user_id, sum(amount_micro) AS a, sum(c) AS c FROM closed GROUP BY user_id) s
      WHERE users.id = s.user_id
  ), keys_moved AS (
    UPDATE key_monthly km SET held_micro = km.held_micro - s.a, held_tokens = km.held_tokens - s.ht,
        spent_micro = km.spent_micro + s.c, tokens = km.tokens + s.tk, requests = km.requests + s.calls
      FROM (SELECT key_id, month, sum(amount_micro) AS a, sum(held_tokens) AS ht, sum(c) AS c, sum(tk) AS tk, count(*) AS calls
              FROM closed WHERE key_id IS NOT NULL GROUP BY key_id, month) s
      WHERE km.key_id = s.key_id AND km.month = s.month
  ), orgs_moved AS (
    UPDATE org_member_monthly om SET held_micro = om.held_micro - s.a, spent_micro = om.spent_micro + s.c
      FROM (SELECT o.org_id, x.user_id, x.month, sum(x.amount_micro) AS a, sum(x.c) AS c
              FROM closed x, unnest(x.org_ids) AS o(org_id) GROUP BY 1, 2, 3) s
      WHERE om.org_id = s.org_id AND om.user_id = s.user_id AND om.month = s.month
  ), charged AS (
    INSERT INTO ledger_entries (user_id, kind, amount_micro, request_id)
      SELECT user_id, 'charge', -c, id FROM closed WHERE c <> 0
  ), events AS (
    INSERT INTO usage_events (request_id, user_id, key_id, model, provider, maker, modality, app, status,
      prompt_tokens, completion_tokens, cached_tokens, cache_write_tokens, cost_micro, fx_milli, latency_ms, cached,
      api, streamed, ttft_ms, error_code, policy_decision)
    SELECT x.id, x.user_id, x.key_id, coalesce(e.model, 'unknown'), e.provider, e.maker, coalesce(e.modality, 'text'), e.app,
      coalesce(e.status, 200), coalesce(e.prompt_tokens, 0), coalesce(e.completion_tokens, 0), coalesce(e.cached_tokens, 0),
      coalesce(e.cache_write_tokens, 0), x.c, e.fx_milli, e.latency_ms, coalesce(e.cached, false),
      e.api, e.streamed, e.ttft_ms, e.error_code, e.policy_decision
    FROM closed x, jsonb_to_record(x.e) AS e(model text, provider text, maker text, modality text, app text, status int,
      prompt_tokens int, completion_tokens int, cached_tokens int, cache_write_tokens int, fx_milli bigint, latency_ms int, cached boolean,
        api text, streamed boolean, ttft_ms int, error_code text, policy_decision text)
    WHERE x.e IS NOT NULL
  )
  SELECT i.n::int, CASE WHEN x.id IS NULL THEN 'not_open' WHEN x.c < x.asked THEN 'capped' ELSE 'ok' END
    FROM input i LEFT JOIN closed x ON x.id = i.id
    ORDER BY i.n;
END $function$;

--> statement-breakpoint
CREATE OR REPLACE FUNCTION gw_lease_charge_late(p_lease uuid[], p_id uuid[], p_cost bigint[], p_hold bigint[], p_tokens bigint[], p_event jsonb[])
 RETURNS TABLE(n integer, r text)
 LANGUAGE plpgsql
 SET enable_seqscan TO 'off'
AS $function$
#variable_conflict use_column
BEGIN
  PERFORM 1 FROM users WHERE id IN (SELECT h.user_id FROM holds h WHERE h.id = ANY(p_lease)) ORDER BY id FOR UPDATE;
  PERFORM 1 FROM holds WHERE id = ANY(p_lease) AND lease ORDER BY id FOR UPDATE;
  RETURN QUERY
  WITH input AS (
    SELECT DISTINCT ON (t.id) t.lease, t.id, t.c AS asked, greatest(0, least(t.c, t.hold)) AS c1, t.tk, t.e, t.n
      FROM unnest(p_lease, p_id, p_cost, p_hold, p_tokens, p_event) WITH ORDINALITY AS t(lease, id, c, hold, tk, e, n)
      ORDER BY t.id, t.n
  ), lease AS (
    SELECT h.id, h.user_id, h.key_id, h.org_ids, h.month, h.amount_micro, h.tokens, h.closed_at IS NULL AS open
      FROM holds h WHERE h.id = ANY(p_lease) AND h.lease
  ), todo AS (
    -- Calls not charged before (the ledger entry is the receipt), with what their lease still covers.
    SELECT i.*, l.user_id, l.open, l.amount_micro AS lease_left,
        sum(i.c1) OVER (PARTITION BY i.lease ORDER BY i.n) - i.c1 AS lease_before
      FROM input i JOIN lease l ON l.id = i.lease
      WHERE NOT EXISTS (SELECT 1 FROM ledger_entries x WHERE x.request_id = i.id)
  ), covered AS (
    SELECT t.*, CASE WHEN t.open THEN greatest(0, least(t.c1, t.lease_left - t.lease_before)) ELSE 0 END AS cov
      FROM todo t
  ), priced AS (
    SELECT x.*, x.cov + greatest(0, least(x.c1 - x.cov,
        u.balance_micro - u.held_micro - (sum(x.c1 - x.cov) OVER (PARTITION BY x.user_id ORDER BY x.n) - (x.c1 - x.cov)))) AS c
      FROM covered x JOIN users u ON u.id = x.user_id
  ), fresh AS (
    -- Every call gets its entry, a free one too: the entry is the receipt.
    INSERT INTO ledger_entries (user_id, kind, amount_micro, request_id, meta)
      SELECT user_id, 'charge', -c, id, jsonb_build_object('lease', lease) FROM priced
    ON CONFLICT (request_id) DO NOTHING
    RETURNING request_id
  ), done AS (
    SELECT p.lease, p.id, p.c, p.cov, p.asked, p.tk, p.e, p.user_id FROM priced p JOIN fresh f ON f.request_id = p.id
  ), per_lease AS (
    SELECT l.id, l.user_id, l.key_id, l.org_ids, l.month, s.c, s.a, s.tk, s.calls,
      CASE WHEN l.open THEN least(s.tk, l.tokens) ELSE 0 END AS at
    FROM (SELECT lease, sum(c) AS c, sum(cov) AS a, sum(tk) AS tk, count(*) AS calls FROM done GROUP BY lease) s JOIN lease l ON l.id = s.lease
  ), leases_moved AS (
    UPDATE holds h SET amount_micro = h.amount_micro - p.a, tokens = h.tokens - p.at, charged_micro = coalesce(h.charged_micro, 0) + p.c
      FROM per_lease p WHERE h.id = p.id
  ), users_moved AS (
    UPDATE users SET held_micro = users.held_micro - s.a, balance_micro = users.balance_micro - s.c
      FROM (SELECT user_id, sum(a) AS a, sum(c) AS c FROM per_lease GROUP BY user_id) s
      WHERE users.id = s.user_id
  ), keys_moved AS (
    UPDATE key_monthly km SET held_micro = km.held_micro - s.a, held_tokens = km.held_tokens - s.at,
        spent_micro = km.spent_micro + s.c, tokens = km.tokens + s.tk, requests = km.requests + s.calls
      FROM (SELECT key_id, month, sum(a) AS a, sum(at) AS at, sum(c) AS c, sum(tk) AS tk, sum(calls) AS calls
              FROM per_lease WHERE key_id IS NOT NULL GROUP BY key_id, month) s
      WHERE km.key_id = s.key_id AND km.month = s.month
  ), orgs_moved AS (
    UPDATE org_member_monthly om SET held_micro = om.held_micro - s.a, spent_micro = om.spent_micro + s.c
      FROM (SELECT o.org_id, p.user_id, p.month, sum(p.a) AS a, sum(p.c) AS c
              FROM per_lease p, unnest(p.org_ids) AS o(org_id) GROUP BY 1, 2, 3) s
      WHERE om.org_id = s.org_id AND om.user_id = s.user_id AND om.month = s.month
  ), events AS (
    INSERT INTO usage_events (request_id, user_id, key_id, model, provider, maker, modality, app, status,
      prompt_tokens, completion_tokens, cached_tokens, cache_write_tokens, cost_micro, fx_milli, latency_ms, cached,
      api, streamed, ttft_ms, error_code, policy_decision)
    SELECT p.id, l.user_id, l.key_id, coalesce(e.model, 'unknown'), e.provider, e.maker, coalesce(e.modality, 'text'), e.app,
      coalesce(e.status, 200), coalesce(e.prompt_tokens, 0), coalesce(e.completion_tokens, 0), coalesce(e.cached_tokens, 0),
      coalesce(e.cache_write_tokens, 0), p.c, e.fx_milli, e.latency_ms, coalesce(e.cached, false),
      e.api, e.streamed, e.ttft_ms, e.error_code, e.policy_decision
    FROM done p JOIN lease l ON l.id = p.lease,
      jsonb_to_record(coalesce(p.e, '{}'::jsonb)) AS e(model text, provider text, maker text, modality text, app text, status int,
        prompt_tokens int, completion_tokens int, cached_tokens int, cache_write_tokens int, fx_milli bigint, latency_ms int, cached boolean,
        api text, streamed boolean, ttft_ms int, error_code text, policy_decision text)
  )
  SELECT t.n::int, CASE WHEN d.id IS NULL THEN 'not_open' WHEN d.c < d.asked THEN 'capped' ELSE 'ok' END
    FROM unnest(p_id) WITH ORDINALITY AS t(id, n) LEFT JOIN done d ON d.id = t.id
    ORDER BY t.n;
END $function$;

--> statement-breakpoint
CREATE OR REPLACE FUNCTION gw_lease_charge(p_lease uuid[], p_id uuid[], p_cost bigint[], p_hold bigint[], p_tokens bigint[], p_event jsonb[])
 RETURNS TABLE(n integer, r text)
 LANGUAGE plpgsql
 SET enable_seqscan TO 'off'
AS $function$
#variable_conflict use_column
BEGIN
  IF NOT gw_lease_covers(p_lease, p_cost, p_hold) THEN
    -- A closed lease (a late charge), or calls its lease does not cover: the account's and the
    -- leases' rows locked, the leases' money moved, then each call charged as before drizzle/0026
    -- (what the lease covers, the rest from free credits only, never below zero).
    PERFORM 1 FROM users WHERE id IN (SELECT h.user_id FROM holds h WHERE h.id = ANY(p_lease)) ORDER BY id FOR UPDATE;
    PERFORM 1 FROM holds WHERE id = ANY(p_lease) AND lease ORDER BY id FOR UPDATE;
    PERFORM gw_lease_move(h.id) FROM holds h WHERE h.id = ANY(p_lease) AND h.lease AND h.closed_at IS NULL;
    RETURN QUERY SELECT * FROM gw_lease_charge_late(p_lease, p_id, p_cost, p_hold, p_tokens, p_event);
    RETURN;
  END IF;
  -- KEY SHARE: charges of one lease do not wait for each other; a trim or close (FOR UPDATE)
  -- waits for the charges in flight, and the charges after it see the lease as it left it.
  PERFORM 1 FROM holds WHERE id = ANY(p_lease) ORDER BY id FOR KEY SHARE;
  -- Looked at again under the lock: a trim or close may have come between. The statement then
  -- rolls back (keeping no lock the account lock above could deadlock with) and the caller
  -- charges each call again alone.
  IF NOT gw_lease_covers(p_lease, p_cost, p_hold) THEN
    RAISE EXCEPTION 'a credit lease changed while its charges were on their way' USING ERRCODE = '40001';
  END IF;
  RETURN QUERY
  WITH input AS (
    -- Each charge capped at its hold; the lease covers the holds of its calls (docs/ledger.md, invariant 6).
    SELECT DISTINCT ON (t.id) t.lease, t.id, t.c AS asked, greatest(0, least(t.c, t.hold)) AS c, t.tk, t.e, t.n
      FROM unnest(p_lease, p_id, p_cost, p_hold, p_tokens, p_event) WITH ORDINALITY AS t(lease, id, c, hold, tk, e, n)
      ORDER BY t.id, t.n
  ), lease AS (
    SELECT h.id, h.user_id, h.key_id FROM holds h WHERE h.id = ANY(p_lease)
  ), fresh AS (
    -- The ledger entry is the receipt (its request_id is unique): a call charged before is not
    -- charged again. One entry per call, free calls included: the move counts the key's requests
    -- and tokens from them.
    INSERT INTO ledger_entries (user_id, kind, amount_micro, request_id, meta, lease_id)
      SELECT l.user_id, 'charge', -i.c, i.id, jsonb_build_object('lease', i.lease, 'tokens', i.tk), i.lease
        FROM input i JOIN lease l ON l.id = i.lease
    ON CONFLICT (request_id) DO NOTHING
    RETURNING request_id
  ), done AS (
    SELECT i.lease, i.id, i.c, i.asked, i.tk, i.e, l.user_id, l.key_id FROM input i JOIN fresh f ON f.request_id = i.id JOIN lease l ON l.id = i.lease
  ), events AS (
    INSERT INTO usage_events (request_id, user_id, key_id, model, provider, maker, modality, app, status,
      prompt_tokens, completion_tokens, cached_tokens, cache_write_tokens, cost_micro, fx_milli, latency_ms, cached,
      api, streamed, ttft_ms, error_code, policy_decision)
    SELECT i.id, i.user_id, i.key_id, coalesce(e.model, 'unknown'), e.provider, e.maker, coalesce(e.modality, 'text'), e.app,
      coalesce(e.status, 200), coalesce(e.prompt_tokens, 0), coalesce(e.completion_tokens, 0), coalesce(e.cached_tokens, 0),
      coalesce(e.cache_write_tokens, 0), i.c, e.fx_milli, e.latency_ms, coalesce(e.cached, false),
      e.api, e.streamed, e.ttft_ms, e.error_code, e.policy_decision
    FROM done i,
      jsonb_to_record(coalesce(i.e, '{}'::jsonb)) AS e(model text, provider text, maker text, modality text, app text, status int,
        prompt_tokens int, completion_tokens int, cached_tokens int, cache_write_tokens int, fx_milli bigint, latency_ms int, cached boolean,
        api text, streamed boolean, ttft_ms int, error_code text, policy_decision text)
  )
  SELECT t.n::int, CASE WHEN d.id IS NULL THEN 'not_open' WHEN d.c < d.asked THEN 'capped' ELSE 'ok' END
    FROM unnest(p_id) WITH ORDINALITY AS t(id, n) LEFT JOIN done d ON d.id = t.id
    ORDER BY t.n;
END $function$;
