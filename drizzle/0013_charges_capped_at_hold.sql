-- A charge never exceeds its hold, and no balance goes below zero.
--
-- A hold is the most a call may cost, checked against the balance and every budget when it is
-- placed. A settle charging whatever the gateway computed from the provider's usage would let a
-- call whose usage outgrew its hold's estimate (images, tools) drive an account that could only
-- afford the hold below zero, so every settle charges at most its hold (and never less than
-- zero) and answers 'capped' instead of 'ok' when it cut the charge (the gateway logs and counts
-- those: gateway_charges_capped_total). The usage event, the ledger entry, the key's and the org
-- members' spent counters all carry the capped amount, so the books still balance.
--
-- A settle within its hold cannot overdraw: every hold was placed with balance - held >= its
-- amount, so charging at most the amount keeps balance - held >= 0. A lease charge is capped at
-- its call's own hold (p_hold); what a lease no longer covers (its calls' charges beyond
-- what it still holds, or any charge to a lease the sweeper already closed) is taken only from
-- the account's free credits (balance - held, never below zero), in call order.
--
-- Lock order as everywhere in the ledger: users rows first (ascending id), then the holds.

CREATE OR REPLACE FUNCTION gw_settle(p_id uuid, p_cost bigint, p_tokens bigint, p_event jsonb)
RETURNS text LANGUAGE plpgsql AS $$
DECLARE h record;
BEGIN
  -- Lock the user first (same order as gw_hold), then close the hold exactly once.
  PERFORM 1 FROM users WHERE id = (SELECT user_id FROM holds WHERE id = p_id) FOR UPDATE;
  UPDATE holds SET status = 'settled', charged_micro = greatest(0, least(p_cost, amount_micro)), closed_at = now()
    WHERE id = p_id AND status = 'open' RETURNING * INTO h;
  IF NOT FOUND THEN RETURN 'not_open'; END IF;
  UPDATE users SET held_micro = held_micro - h.amount_micro, balance_micro = balance_micro - h.charged_micro WHERE id = h.user_id;
  IF h.key_id IS NOT NULL THEN
    UPDATE key_monthly SET held_micro = held_micro - h.amount_micro, held_tokens = held_tokens - h.tokens,
      spent_micro = spent_micro + h.charged_micro, tokens = tokens + p_tokens, requests = requests + 1
      WHERE key_id = h.key_id AND month = h.month;
  END IF;
  UPDATE org_member_monthly SET held_micro = held_micro - h.amount_micro, spent_micro = spent_micro + h.charged_micro
    WHERE user_id = h.user_id AND month = h.month AND org_id = ANY(h.org_ids);
  IF h.charged_micro <> 0 THEN
    INSERT INTO ledger_entries (user_id, kind, amount_micro, request_id) VALUES (h.user_id, 'charge', -h.charged_micro, p_id);
  END IF;
  IF p_event IS NOT NULL THEN
    PERFORM gw_insert_usage(p_id, h.user_id, h.key_id, h.charged_micro, p_event);
  END IF;
  RETURN CASE WHEN h.charged_micro < p_cost THEN 'capped' ELSE 'ok' END;
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
      prompt_tokens, completion_tokens, cached_tokens, cache_write_tokens, cost_micro, fx_milli, latency_ms, cached)
    SELECT x.id, x.user_id, x.key_id, coalesce(e.model, 'unknown'), e.provider, e.maker, coalesce(e.modality, 'text'), e.app,
      coalesce(e.status, 200), coalesce(e.prompt_tokens, 0), coalesce(e.completion_tokens, 0), coalesce(e.cached_tokens, 0),
      coalesce(e.cache_write_tokens, 0), x.c, e.fx_milli, e.latency_ms, coalesce(e.cached, false)
    FROM closed x, jsonb_to_record(x.e) AS e(model text, provider text, maker text, modality text, app text, status int,
      prompt_tokens int, completion_tokens int, cached_tokens int, cache_write_tokens int, fx_milli bigint, latency_ms int, cached boolean)
    WHERE x.e IS NOT NULL
    ON CONFLICT (request_id) DO NOTHING
  )
  SELECT i.n::int, CASE WHEN x.id IS NULL THEN 'not_open' WHEN x.c < x.asked THEN 'capped' ELSE 'ok' END
    FROM input i LEFT JOIN closed x ON x.id = i.id
    ORDER BY i.n;
END $$;
--> statement-breakpoint
DROP FUNCTION IF EXISTS gw_lease_charge(uuid[], uuid[], bigint[], bigint[], jsonb[]);
--> statement-breakpoint
-- Charges calls made under leases; p_hold is each call's own hold (what it was carved for). A
-- call whose usage event is already stored was charged before and moves nothing ('not_open').
-- Each call's charge is capped at its hold; an open lease covers its calls, in call order, from
-- what it still holds (and gives that up); whatever it does not cover, and every charge to a
-- lease already closed, comes from the account's free credits only, in call order, never below
-- zero. The counters move by the sums; the charge's ledger entry names its lease.
CREATE FUNCTION gw_lease_charge(p_lease uuid[], p_id uuid[], p_cost bigint[], p_hold bigint[], p_tokens bigint[], p_event jsonb[])
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
      prompt_tokens, completion_tokens, cached_tokens, cache_write_tokens, cost_micro, fx_milli, latency_ms, cached)
    SELECT p.id, l.user_id, l.key_id, coalesce(e.model, 'unknown'), e.provider, e.maker, coalesce(e.modality, 'text'), e.app,
      coalesce(e.status, 200), coalesce(e.prompt_tokens, 0), coalesce(e.completion_tokens, 0), coalesce(e.cached_tokens, 0),
      coalesce(e.cache_write_tokens, 0), p.c, e.fx_milli, e.latency_ms, coalesce(e.cached, false)
    FROM priced p JOIN lease l ON l.id = p.lease,
      jsonb_to_record(coalesce(p.e, '{}'::jsonb)) AS e(model text, provider text, maker text, modality text, app text, status int,
        prompt_tokens int, completion_tokens int, cached_tokens int, cache_write_tokens int, fx_milli bigint, latency_ms int, cached boolean)
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
--> statement-breakpoint
-- A live call keeps its hold (or its lease) from expiring: the gateway moves the expiry of the
-- holds of calls still running to now + p_ttl_seconds (never earlier than it was), so the
-- sweeper of any instance never takes a long stream's hold for one whose request died.
CREATE FUNCTION gw_renew_holds(p_id uuid[], p_ttl_seconds int)
RETURNS int LANGUAGE sql SET enable_seqscan = off AS $$
  WITH renewed AS (
    UPDATE holds SET expires_at = greatest(expires_at, now() + make_interval(secs => p_ttl_seconds))
      WHERE id = ANY(p_id) AND closed_at IS NULL
      RETURNING 1
  )
  SELECT count(*)::int FROM renewed;
$$;
