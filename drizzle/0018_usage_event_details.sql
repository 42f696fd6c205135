-- Usage events name what the activity shows: the API that carried the call (chat, responses,
-- messages, embeddings, video), whether it streamed, the time to its first token, a failure's
-- error code and a routing policy's decision (its X-Policy-Decision). Every column is added only
-- if missing (0016 adds `api`), and every function that writes usage
-- events reads them from the event: gw_insert_usage (single settles and releases) and the
-- batched gw_settle_many and gw_lease_charge, whose bodies are those of 0013 with the five
-- columns added.
ALTER TABLE "usage_events" ADD COLUMN IF NOT EXISTS "api" text;
--> statement-breakpoint
ALTER TABLE "usage_events" ADD COLUMN IF NOT EXISTS "streamed" boolean;
--> statement-breakpoint
ALTER TABLE "usage_events" ADD COLUMN IF NOT EXISTS "ttft_ms" integer;
--> statement-breakpoint
ALTER TABLE "usage_events" ADD COLUMN IF NOT EXISTS "error_code" text;
--> statement-breakpoint
ALTER TABLE "usage_events" ADD COLUMN IF NOT EXISTS "policy_decision" text;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION gw_insert_usage(p_id uuid, p_user uuid, p_key uuid, p_cost bigint, p_event jsonb)
RETURNS void LANGUAGE plpgsql AS $$
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
    api text, streamed boolean, ttft_ms int, error_code text, policy_decision text)
  ON CONFLICT (request_id) DO NOTHING;
END $$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION gw_settle_many(p_id uuid[], p_cost bigint[], p_tokens bigint[], p_event jsonb[])
RETURNS TABLE(n int, r text)
LANGUAGE plpgsql SET enable_seqscan = off AS $$
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
    ON CONFLICT (request_id) DO NOTHING
  )
  SELECT i.n::int, CASE WHEN x.id IS NULL THEN 'not_open' WHEN x.c < x.asked THEN 'capped' ELSE 'ok' END
    FROM input i LEFT JOIN closed x ON x.id = i.id
    ORDER BY i.n;
END $$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION gw_lease_charge(p_lease uuid[], p_id uuid[], p_cost bigint[], p_hold bigint[], p_tokens bigint[], p_event jsonb[])
RETURNS TABLE(n int, r text)
LANGUAGE plpgsql SET enable_seqscan = off AS $$
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
    -- Calls not charged before (the usage event is the receipt), with what their lease still covers.
    SELECT i.*, l.user_id, l.open, l.amount_micro AS lease_left,
        sum(i.c1) OVER (PARTITION BY i.lease ORDER BY i.n) - i.c1 AS lease_before
      FROM input i JOIN lease l ON l.id = i.lease
      WHERE NOT EXISTS (SELECT 1 FROM usage_events u WHERE u.request_id = i.id)
  ), covered AS (
    SELECT t.*, CASE WHEN t.open THEN greatest(0, least(t.c1, t.lease_left - t.lease_before)) ELSE 0 END AS cov
      FROM todo t
  ), priced AS (
    SELECT x.*, x.cov + greatest(0, least(x.c1 - x.cov,
        u.balance_micro - u.held_micro - (sum(x.c1 - x.cov) OVER (PARTITION BY x.user_id ORDER BY x.n) - (x.c1 - x.cov)))) AS c
      FROM covered x JOIN users u ON u.id = x.user_id
  ), fresh AS (
    INSERT INTO usage_events (request_id, user_id, key_id, model, provider, maker, modality, app, status,
      prompt_tokens, completion_tokens, cached_tokens, cache_write_tokens, cost_micro, fx_milli, latency_ms, cached,
      api, streamed, ttft_ms, error_code, policy_decision)
    SELECT p.id, l.user_id, l.key_id, coalesce(e.model, 'unknown'), e.provider, e.maker, coalesce(e.modality, 'text'), e.app,
      coalesce(e.status, 200), coalesce(e.prompt_tokens, 0), coalesce(e.completion_tokens, 0), coalesce(e.cached_tokens, 0),
      coalesce(e.cache_write_tokens, 0), p.c, e.fx_milli, e.latency_ms, coalesce(e.cached, false),
      e.api, e.streamed, e.ttft_ms, e.error_code, e.policy_decision
    FROM priced p JOIN lease l ON l.id = p.lease,
      jsonb_to_record(coalesce(p.e, '{}'::jsonb)) AS e(model text, provider text, maker text, modality text, app text, status int,
        prompt_tokens int, completion_tokens int, cached_tokens int, cache_write_tokens int, fx_milli bigint, latency_ms int, cached boolean,
        api text, streamed boolean, ttft_ms int, error_code text, policy_decision text)
    ON CONFLICT (request_id) DO NOTHING
    RETURNING request_id
  ), done AS (
    SELECT p.lease, p.id, p.c, p.cov, p.asked, p.tk, p.user_id FROM priced p JOIN fresh f ON f.request_id = p.id
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
  ), charged AS (
    INSERT INTO ledger_entries (user_id, kind, amount_micro, request_id, meta)
      SELECT user_id, 'charge', -c, id, jsonb_build_object('lease', lease) FROM done WHERE c <> 0
  )
  SELECT t.n::int, CASE WHEN d.id IS NULL THEN 'not_open' WHEN d.c < d.asked THEN 'capped' ELSE 'ok' END
    FROM unnest(p_id) WITH ORDINALITY AS t(id, n) LEFT JOIN done d ON d.id = t.id
    ORDER BY t.n;
END $$;
