-- GENERATED FILE, do not edit: the SQL functions, triggers and ledger tables that the
-- drizzle/ migrations leave in the schema, replayed on PGlite and read back from the catalog.
-- Regenerate after changing a migration:
--   npm run docs:ledger-sql    (./node_modules/.bin/bun scripts/ledger-sql.ts)
-- test/db/ledger-sql.test.ts fails while this file differs from the migrations.

-- 21 functions, by name

CREATE OR REPLACE FUNCTION public.gw_hold(p_id uuid, p_user uuid, p_key uuid, p_month text, p_amount bigint, p_tokens bigint, p_ttl_seconds integer, OUT r text, OUT free_micro bigint, OUT free_tokens bigint)
 RETURNS record
 LANGUAGE plpgsql
AS $function$
DECLARE
  u record; k record; m record; om record; mm record;
  orgs uuid[] := '{}';
BEGIN
  SELECT balance_micro, held_micro INTO u FROM users WHERE id = p_user AND deleted_at IS NULL FOR UPDATE;
  IF NOT FOUND THEN r := 'unauthorized'; RETURN; END IF;
  IF EXISTS (SELECT 1 FROM holds WHERE id = p_id) THEN r := 'duplicate'; RETURN; END IF;
  free_micro := u.balance_micro - u.held_micro;
  IF free_micro < p_amount THEN r := 'insufficient_credits'; RETURN; END IF;
  IF p_key IS NOT NULL THEN
    SELECT monthly_budget_krw, monthly_token_limit INTO k FROM api_keys WHERE id = p_key;
    INSERT INTO key_monthly (key_id, month) VALUES (p_key, p_month) ON CONFLICT DO NOTHING;
    SELECT spent_micro, held_micro, tokens, held_tokens INTO m FROM key_monthly WHERE key_id = p_key AND month = p_month FOR UPDATE;
    IF k.monthly_budget_krw IS NOT NULL THEN
      free_micro := least(free_micro, k.monthly_budget_krw::bigint * 1000000 - m.spent_micro - m.held_micro);
      IF free_micro < p_amount THEN r := 'monthly_budget_exceeded'; RETURN; END IF;
    END IF;
    IF k.monthly_token_limit IS NOT NULL THEN
      free_tokens := k.monthly_token_limit - m.tokens - m.held_tokens;
      IF free_tokens < p_tokens THEN r := 'monthly_token_quota_exceeded'; RETURN; END IF;
      free_tokens := free_tokens - p_tokens;
    END IF;
  END IF;
  FOR om IN SELECT org_id, monthly_budget_krw FROM org_members WHERE user_id = p_user AND monthly_budget_krw IS NOT NULL ORDER BY org_id LOOP
    INSERT INTO org_member_monthly (org_id, user_id, month) VALUES (om.org_id, p_user, p_month) ON CONFLICT DO NOTHING;
    SELECT spent_micro, held_micro INTO mm FROM org_member_monthly WHERE org_id = om.org_id AND user_id = p_user AND month = p_month FOR UPDATE;
    free_micro := least(free_micro, om.monthly_budget_krw::bigint * 1000000 - mm.spent_micro - mm.held_micro);
    IF free_micro < p_amount THEN r := 'org_member_monthly_budget_exceeded'; RETURN; END IF;
    orgs := orgs || om.org_id;
  END LOOP;
  UPDATE users SET held_micro = held_micro + p_amount WHERE id = p_user;
  IF p_key IS NOT NULL THEN
    UPDATE key_monthly SET held_micro = held_micro + p_amount, held_tokens = held_tokens + p_tokens WHERE key_id = p_key AND month = p_month;
  END IF;
  IF cardinality(orgs) > 0 THEN
    UPDATE org_member_monthly SET held_micro = held_micro + p_amount WHERE user_id = p_user AND month = p_month AND org_id = ANY(orgs);
  END IF;
  INSERT INTO holds (id, user_id, key_id, org_ids, month, amount_micro, tokens, expires_at)
  VALUES (p_id, p_user, p_key, orgs, p_month, p_amount, p_tokens, now() + make_interval(secs => p_ttl_seconds));
  free_micro := free_micro - p_amount;
  r := 'ok';
END $function$;

CREATE OR REPLACE FUNCTION public.gw_hold_many(p_id uuid[], p_user uuid[], p_key uuid[], p_month text[], p_amount bigint[], p_tokens bigint[], p_ttl integer[])
 RETURNS TABLE(n integer, r text, free_micro bigint, free_tokens bigint)
 LANGUAGE plpgsql
 SET enable_seqscan TO 'off'
AS $function$
#variable_conflict use_column
DECLARE fast boolean;
BEGIN
  PERFORM 1 FROM users WHERE id = ANY(p_user) ORDER BY id FOR UPDATE;
  INSERT INTO key_monthly (key_id, month)
    SELECT DISTINCT t.k, t.m FROM unnest(p_key, p_month) AS t(k, m) WHERE t.k IS NOT NULL ORDER BY 1, 2
    ON CONFLICT DO NOTHING;
  SELECT coalesce(bool_and(coalesce(c.ok, false)), false) INTO fast FROM (
    SELECT (SELECT count(DISTINCT x) FROM unnest(p_id) AS x) = cardinality(p_id) AS ok
    UNION ALL SELECT NOT EXISTS (SELECT 1 FROM holds WHERE id = ANY(p_id))
    UNION ALL SELECT NOT EXISTS (SELECT 1 FROM org_members WHERE user_id = ANY(p_user) AND monthly_budget_krw IS NOT NULL)
    UNION ALL
    SELECT u.id IS NOT NULL AND u.deleted_at IS NULL AND u.balance_micro - u.held_micro >= s.a
      FROM (SELECT t.u, sum(t.a) AS a FROM unnest(p_user, p_amount) AS t(u, a) GROUP BY t.u) s
      LEFT JOIN users u ON u.id = s.u
    UNION ALL
    SELECT km.key_id IS NOT NULL
       AND (k.monthly_budget_krw IS NULL OR k.monthly_budget_krw::bigint * 1000000 - km.spent_micro - km.held_micro >= s.a)
       AND (k.monthly_token_limit IS NULL OR k.monthly_token_limit - km.tokens - km.held_tokens >= s.tk)
      FROM (SELECT t.k, t.m, sum(t.a) AS a, sum(t.tk) AS tk FROM unnest(p_key, p_month, p_amount, p_tokens) AS t(k, m, a, tk)
             WHERE t.k IS NOT NULL GROUP BY t.k, t.m) s
      LEFT JOIN api_keys k ON k.id = s.k
      LEFT JOIN key_monthly km ON km.key_id = s.k AND km.month = s.m
  ) c;

  IF NOT fast THEN
    RETURN QUERY
      SELECT t.n::int, h.r, h.free_micro, h.free_tokens
        FROM unnest(p_id, p_user, p_key, p_month, p_amount, p_tokens, p_ttl) WITH ORDINALITY AS t(id, u, k, m, a, tk, ttl, n),
             LATERAL gw_hold(t.id, t.u, t.k, t.m, t.a, t.tk, t.ttl) h
        ORDER BY t.n;
    RETURN;
  END IF;

  UPDATE users u SET held_micro = u.held_micro + s.a
    FROM (SELECT t.u, sum(t.a) AS a FROM unnest(p_user, p_amount) AS t(u, a) GROUP BY t.u) s
    WHERE u.id = s.u;
  UPDATE key_monthly km SET held_micro = km.held_micro + s.a, held_tokens = km.held_tokens + s.tk
    FROM (SELECT t.k, t.m, sum(t.a) AS a, sum(t.tk) AS tk FROM unnest(p_key, p_month, p_amount, p_tokens) AS t(k, m, a, tk)
           WHERE t.k IS NOT NULL GROUP BY t.k, t.m) s
    WHERE km.key_id = s.k AND km.month = s.m;
  INSERT INTO holds (id, user_id, key_id, org_ids, month, amount_micro, tokens, expires_at)
    SELECT t.id, t.u, t.k, '{}', t.m, t.a, t.tk, now() + make_interval(secs => t.ttl)
      FROM unnest(p_id, p_user, p_key, p_month, p_amount, p_tokens, p_ttl) AS t(id, u, k, m, a, tk, ttl);
  RETURN QUERY
    SELECT t.n::int, 'ok'::text,
      least(u.balance_micro - u.held_micro,
            CASE WHEN k.monthly_budget_krw IS NOT NULL THEN k.monthly_budget_krw::bigint * 1000000 - km.spent_micro - km.held_micro END),
      CASE WHEN k.monthly_token_limit IS NOT NULL THEN k.monthly_token_limit - km.tokens - km.held_tokens END
      FROM unnest(p_user, p_key, p_month) WITH ORDINALITY AS t(u, k, m, n)
      JOIN users u ON u.id = t.u
      LEFT JOIN api_keys k ON k.id = t.k
      LEFT JOIN key_monthly km ON km.key_id = t.k AND km.month = t.m
      ORDER BY t.n;
END $function$;

CREATE OR REPLACE FUNCTION public.gw_insert_usage(p_id uuid, p_user uuid, p_key uuid, p_cost bigint, p_event jsonb)
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

CREATE OR REPLACE FUNCTION public.gw_lease_charge(p_lease uuid[], p_id uuid[], p_cost bigint[], p_hold bigint[], p_tokens bigint[], p_event jsonb[])
 RETURNS TABLE(n integer, r text)
 LANGUAGE plpgsql
 SET enable_seqscan TO 'off'
 SET plan_cache_mode TO 'force_generic_plan'
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

CREATE OR REPLACE FUNCTION public.gw_lease_charge_late(p_lease uuid[], p_id uuid[], p_cost bigint[], p_hold bigint[], p_tokens bigint[], p_event jsonb[])
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

CREATE OR REPLACE FUNCTION public.gw_lease_covers(p_lease uuid[], p_cost bigint[], p_hold bigint[])
 RETURNS boolean
 LANGUAGE plpgsql
 STABLE
 SET plan_cache_mode TO 'force_generic_plan'
AS $function$
DECLARE covered boolean;
BEGIN
  -- Whether every lease is open and its reserved room covers the batch's charges (each capped at
  -- its call's hold). The room still counts what was charged since the last move, so this bounds
  -- one statement, not the lease's whole life: that the calls of all its statements together fit
  -- is the in-memory policy's promise (docs/ledger.md, invariant 6), and the move never takes a
  -- balance below zero if it were broken (gw_lease_move). One row read per lease, no scan.
  WITH asked AS (
    SELECT t.lease, sum(greatest(0, least(t.c, t.hold))) AS c FROM unnest(p_lease, p_cost, p_hold) AS t(lease, c, hold) GROUP BY t.lease
  )
  SELECT coalesce(bool_and(h.id IS NOT NULL AND h.closed_at IS NULL AND h.lease AND a.c <= h.amount_micro), false)
    INTO covered
    FROM asked a LEFT JOIN holds h ON h.id = a.lease;
  RETURN covered;
END $function$;

CREATE OR REPLACE FUNCTION public.gw_lease_move(p_lease uuid)
 RETURNS void
 LANGUAGE plpgsql
 SET enable_seqscan TO 'off'
AS $function$
DECLARE h record; s record; free bigint; cov bigint; from_free bigint; uncovered bigint; at bigint;
BEGIN
  SELECT * INTO h FROM holds WHERE id = p_lease;
  SELECT coalesce(-sum(amount_micro), 0) AS c, count(*) AS calls, coalesce(sum((meta->>'tokens')::bigint), 0) AS tk, max(id) AS last
    INTO s FROM ledger_entries WHERE lease_id = p_lease AND id > h.moved_upto;
  IF s.last IS NULL THEN RETURN; END IF;
  cov := least(s.c, h.amount_micro);
  SELECT balance_micro - held_micro INTO free FROM users WHERE id = h.user_id;
  from_free := greatest(0, least(s.c - cov, free));
  uncovered := s.c - cov - from_free;
  at := least(s.tk, h.tokens);
  UPDATE holds SET amount_micro = amount_micro - cov, tokens = tokens - at,
      charged_micro = coalesce(charged_micro, 0) + s.c - uncovered, moved_upto = s.last
    WHERE id = p_lease;
  UPDATE users SET held_micro = held_micro - cov, balance_micro = balance_micro - (s.c - uncovered) WHERE id = h.user_id;
  IF h.key_id IS NOT NULL THEN
    UPDATE key_monthly SET held_micro = held_micro - cov, held_tokens = held_tokens - at,
        spent_micro = spent_micro + s.c - uncovered, tokens = tokens + s.tk, requests = requests + s.calls
      WHERE key_id = h.key_id AND month = h.month;
  END IF;
  UPDATE org_member_monthly SET held_micro = held_micro - cov, spent_micro = spent_micro + s.c - uncovered
    WHERE user_id = h.user_id AND month = h.month AND org_id = ANY(h.org_ids);
  IF uncovered > 0 THEN
    INSERT INTO ledger_entries (user_id, kind, amount_micro, meta)
      VALUES (h.user_id, 'cap_refund', uncovered, jsonb_build_object('lease', p_lease));
  END IF;
END $function$;

CREATE OR REPLACE FUNCTION public.gw_lease_open(p_id uuid, p_user uuid, p_key uuid, p_month text, p_amount bigint, p_tokens bigint, p_ttl_seconds integer)
 RETURNS TABLE(r text, free_micro bigint, free_tokens bigint)
 LANGUAGE plpgsql
AS $function$
DECLARE x record;
BEGIN
  SELECT * INTO x FROM gw_hold(p_id, p_user, p_key, p_month, p_amount, p_tokens, p_ttl_seconds);
  IF x.r = 'ok' THEN
    UPDATE holds SET lease = true WHERE id = p_id;
  END IF;
  RETURN QUERY SELECT x.r, x.free_micro, x.free_tokens;
END $function$;

CREATE OR REPLACE FUNCTION public.gw_lease_trim(p_lease uuid, p_keep_micro bigint, p_keep_tokens bigint, p_close boolean)
 RETURNS text
 LANGUAGE plpgsql
AS $function$
DECLARE h record; dm bigint; dt bigint;
BEGIN
  PERFORM 1 FROM users WHERE id = (SELECT user_id FROM holds WHERE id = p_lease) FOR UPDATE;
  PERFORM 1 FROM holds WHERE id = p_lease AND lease AND closed_at IS NULL FOR UPDATE;
  IF NOT FOUND THEN RETURN 'not_open'; END IF;
  -- First what its calls were charged, so what is kept or given back is what is left.
  PERFORM gw_lease_move(p_lease);
  SELECT * INTO h FROM holds WHERE id = p_lease;
  IF p_close THEN
    dm := h.amount_micro; dt := h.tokens;
  ELSE
    dm := greatest(h.amount_micro - greatest(p_keep_micro, 0), 0);
    dt := greatest(h.tokens - greatest(p_keep_tokens, 0), 0);
  END IF;
  UPDATE holds SET amount_micro = amount_micro - dm, tokens = tokens - dt,
      status = CASE WHEN p_close THEN 'settled' ELSE status END,
      charged_micro = CASE WHEN p_close THEN coalesce(charged_micro, 0) ELSE charged_micro END,
      closed_at = CASE WHEN p_close THEN now() ELSE closed_at END
    WHERE id = p_lease;
  UPDATE users SET held_micro = held_micro - dm WHERE id = h.user_id;
  IF h.key_id IS NOT NULL THEN
    UPDATE key_monthly SET held_micro = held_micro - dm, held_tokens = held_tokens - dt WHERE key_id = h.key_id AND month = h.month;
  END IF;
  UPDATE org_member_monthly SET held_micro = held_micro - dm
    WHERE user_id = h.user_id AND month = h.month AND org_id = ANY(h.org_ids);
  RETURN 'ok';
END $function$;

CREATE OR REPLACE FUNCTION public.gw_ledger_step(s_id uuid[], s_cost bigint[], s_tokens bigint[], s_event jsonb[], h_id uuid[], h_user uuid[], h_key uuid[], h_month text[], h_amount bigint[], h_tokens bigint[], h_ttl integer[])
 RETURNS TABLE(kind text, n integer, r text, free_micro bigint, free_tokens bigint)
 LANGUAGE plpgsql
 SET enable_seqscan TO 'off'
 SET plan_cache_mode TO 'auto'
AS $function$
#variable_conflict use_column
BEGIN
  IF coalesce(cardinality(s_id), 0) + coalesce(cardinality(h_id), 0) <= 8 THEN
    PERFORM set_config('plan_cache_mode', 'force_generic_plan', true);
  END IF;
  PERFORM 1 FROM users
    WHERE id = ANY(h_user) OR id IN (SELECT h.user_id FROM holds h WHERE h.id = ANY(s_id))
    ORDER BY id FOR UPDATE;
  IF cardinality(s_id) > 0 THEN
    RETURN QUERY SELECT 's'::text, x.n, x.r, NULL::bigint, NULL::bigint FROM gw_settle_many(s_id, s_cost, s_tokens, s_event) x;
  END IF;
  IF cardinality(h_id) > 0 THEN
    RETURN QUERY SELECT 'h'::text, x.n, x.r, x.free_micro, x.free_tokens FROM gw_hold_many(h_id, h_user, h_key, h_month, h_amount, h_tokens, h_ttl) x;
  END IF;
END $function$;

CREATE OR REPLACE FUNCTION public.gw_payment_failed(p_order text, p_status text, p_code text, p_message text)
 RETURNS boolean
 LANGUAGE plpgsql
AS $function$
BEGIN
  UPDATE payments SET status = p_status, failure_code = p_code, failure_message = p_message, updated_at = now()
    WHERE order_id = p_order AND status IN ('pending', 'failed', 'canceled');
  RETURN FOUND;
END $function$;

CREATE OR REPLACE FUNCTION public.gw_payment_paid(p_order text, p_payment text, p_amount bigint)
 RETURNS TABLE(state text, balance_micro bigint)
 LANGUAGE plpgsql
AS $function$
DECLARE p payments%ROWTYPE; b bigint;
BEGIN
  SELECT * INTO p FROM payments WHERE order_id = p_order FOR UPDATE;
  IF NOT FOUND THEN RETURN QUERY SELECT 'unknown'::text, NULL::bigint; RETURN; END IF;
  IF p.amount_krw <> p_amount THEN RETURN QUERY SELECT 'amount_mismatch'::text, NULL::bigint; RETURN; END IF;
  IF p.status NOT IN ('pending', 'failed', 'canceled') THEN
    RETURN QUERY SELECT 'already'::text, NULL::bigint; RETURN;
  END IF;
  IF EXISTS (SELECT 1 FROM payments q WHERE q.provider = p.provider AND q.provider_payment_id = p_payment AND q.order_id <> p_order) THEN
    RETURN QUERY SELECT 'payment_reused'::text, NULL::bigint; RETURN;
  END IF;
  UPDATE payments SET status = 'paid', provider_payment_id = p_payment, paid_at = now(), updated_at = now(),
    failure_code = NULL, failure_message = NULL WHERE order_id = p_order;
  -- Money was taken: credited even if the account was deleted since (the operator settles it).
  UPDATE users SET balance_micro = users.balance_micro + p.credit_micro WHERE id = p.user_id RETURNING users.balance_micro INTO b;
  INSERT INTO ledger_entries (user_id, kind, amount_micro, meta) VALUES (p.user_id, 'topup', p.credit_micro,
    jsonb_build_object('order_id', p_order, 'provider', p.provider, 'paid_krw', p.amount_krw, 'fee_krw', p.fee_krw));
  RETURN QUERY SELECT 'credited'::text, b;
END $function$;

CREATE OR REPLACE FUNCTION public.gw_payment_refunded(p_order text, p_total bigint)
 RETURNS bigint
 LANGUAGE plpgsql
AS $function$
DECLARE p payments%ROWTYPE; t bigint; share bigint; free bigint; taken bigint;
BEGIN
  SELECT * INTO p FROM payments WHERE order_id = p_order FOR UPDATE;
  IF NOT FOUND OR p.status NOT IN ('paid', 'partially_refunded') THEN RETURN NULL; END IF;
  t := least(p_total, p.amount_krw);
  IF t <= p.refunded_krw THEN RETURN NULL; END IF;
  share := (p.credit_micro * t) / p.amount_krw - (p.credit_micro * p.refunded_krw) / p.amount_krw;
  SELECT greatest(u.balance_micro - u.held_micro, 0) INTO free FROM users u WHERE u.id = p.user_id FOR UPDATE;
  taken := least(share, coalesce(free, 0));
  UPDATE users SET balance_micro = users.balance_micro - taken WHERE id = p.user_id;
  INSERT INTO ledger_entries (user_id, kind, amount_micro, meta) VALUES (p.user_id, 'refund', -taken,
    jsonb_build_object('order_id', p_order, 'provider', p.provider, 'refunded_krw', t - p.refunded_krw,
      'share_micro', share, 'uncollected_micro', share - taken));
  UPDATE payments SET refunded_krw = t, updated_at = now(),
    status = CASE WHEN t >= p.amount_krw THEN 'refunded' ELSE 'partially_refunded' END WHERE order_id = p_order;
  RETURN taken;
END $function$;

CREATE OR REPLACE FUNCTION public.gw_release(p_id uuid, p_event jsonb)
 RETURNS text
 LANGUAGE plpgsql
AS $function$
DECLARE h record;
BEGIN
  PERFORM 1 FROM users WHERE id = (SELECT user_id FROM holds WHERE id = p_id) FOR UPDATE;
  UPDATE holds SET status = 'released', charged_micro = 0, closed_at = now()
    WHERE id = p_id AND status = 'open' RETURNING * INTO h;
  IF NOT FOUND THEN RETURN 'not_open'; END IF;
  UPDATE users SET held_micro = held_micro - h.amount_micro WHERE id = h.user_id;
  IF h.key_id IS NOT NULL THEN
    UPDATE key_monthly SET held_micro = held_micro - h.amount_micro, held_tokens = held_tokens - h.tokens
      WHERE key_id = h.key_id AND month = h.month;
  END IF;
  UPDATE org_member_monthly SET held_micro = held_micro - h.amount_micro
    WHERE user_id = h.user_id AND month = h.month AND org_id = ANY(h.org_ids);
  IF p_event IS NOT NULL THEN
    PERFORM gw_insert_usage(p_id, h.user_id, h.key_id, 0, p_event);
  END IF;
  RETURN 'ok';
END $function$;

CREATE OR REPLACE FUNCTION public.gw_renew_holds(p_id uuid[], p_ttl_seconds integer)
 RETURNS integer
 LANGUAGE sql
 SET enable_seqscan TO 'off'
AS $function$
  WITH renewed AS (
    UPDATE holds SET expires_at = greatest(expires_at, now() + make_interval(secs => p_ttl_seconds))
      WHERE id = ANY(p_id) AND closed_at IS NULL
      RETURNING 1
  )
  SELECT count(*)::int FROM renewed;
$function$;

CREATE OR REPLACE FUNCTION public.gw_settle(p_id uuid, p_cost bigint, p_tokens bigint, p_event jsonb)
 RETURNS text
 LANGUAGE plpgsql
AS $function$
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
END $function$;

CREATE OR REPLACE FUNCTION public.gw_settle_many(p_id uuid[], p_cost bigint[], p_tokens bigint[], p_event jsonb[])
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

CREATE OR REPLACE FUNCTION public.gw_topup(p_user uuid, p_amount bigint, p_meta jsonb)
 RETURNS bigint
 LANGUAGE plpgsql
AS $function$
DECLARE b bigint;
BEGIN
  UPDATE users SET balance_micro = balance_micro + p_amount WHERE id = p_user AND deleted_at IS NULL RETURNING balance_micro INTO b;
  IF NOT FOUND THEN RETURN NULL; END IF;
  INSERT INTO ledger_entries (user_id, kind, amount_micro, meta) VALUES (p_user, 'topup', p_amount, p_meta);
  RETURN b;
END $function$;

CREATE OR REPLACE FUNCTION public.gw_topup_once(p_key text, p_hash text, p_user uuid, p_amount bigint, p_paid bigint, p_meta jsonb)
 RETURNS TABLE(state text, balance_micro bigint)
 LANGUAGE plpgsql
AS $function$
DECLARE b bigint; h text; r bigint;
BEGIN
  INSERT INTO topup_idempotency (idem_key, user_id, body_hash, paid_krw, balance_micro)
    VALUES (p_key, p_user, p_hash, p_paid, 0) ON CONFLICT (idem_key) DO NOTHING;
  IF NOT FOUND THEN
    SELECT t.body_hash, t.balance_micro INTO h, r FROM topup_idempotency t WHERE t.idem_key = p_key;
    IF h <> p_hash THEN RETURN QUERY SELECT 'reused'::text, NULL::bigint; RETURN; END IF;
    RETURN QUERY SELECT 'replay'::text, r; RETURN;
  END IF;
  b := gw_topup(p_user, p_amount, p_meta || jsonb_build_object('idempotency_key', p_key));
  IF b IS NULL THEN
    DELETE FROM topup_idempotency WHERE idem_key = p_key;
    RETURN QUERY SELECT 'missing'::text, NULL::bigint; RETURN;
  END IF;
  UPDATE topup_idempotency SET balance_micro = b WHERE idem_key = p_key;
  RETURN QUERY SELECT 'new'::text, b;
END $function$;

CREATE OR REPLACE FUNCTION public.gw_usage_partition(p_at timestamp with time zone)
 RETURNS boolean
 LANGUAGE plpgsql
AS $function$
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
END $function$;

CREATE OR REPLACE FUNCTION public.gw_usage_upkeep(p_keep_months integer, p_ahead integer)
 RETURNS jsonb
 LANGUAGE plpgsql
AS $function$
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
END $function$;

-- Triggers: none

-- Tables the functions read or write: api_keys, holds, key_monthly, ledger_entries, org_member_monthly, org_members, payments, stats_rollup_state, topup_idempotency, usage_events, users

CREATE TABLE public.api_keys (
  id uuid NOT NULL DEFAULT gen_random_uuid(),
  user_id uuid NOT NULL,
  kind text NOT NULL DEFAULT 'standard'::text,
  management_key_id uuid,
  name text NOT NULL DEFAULT 'Default'::text,
  key_hash text NOT NULL,
  key_prefix text NOT NULL,
  byok_provider text,
  byok_secret text,
  allowed_models jsonb,
  monthly_budget_krw bigint,
  monthly_token_limit bigint,
  expires_at timestamp with time zone,
  is_active boolean NOT NULL DEFAULT true,
  pii_masking_enabled boolean NOT NULL DEFAULT true,
  response_cache_mode text NOT NULL DEFAULT 'off'::text,
  scopes jsonb,
  ip_allowlist jsonb,
  created_at timestamp with time zone NOT NULL DEFAULT now(),
  updated_at timestamp with time zone NOT NULL DEFAULT now(),
  last_used_at timestamp with time zone,
  deleted_at timestamp with time zone,
  hedge boolean NOT NULL DEFAULT false,
  CONSTRAINT api_keys_pkey PRIMARY KEY (id),
  CONSTRAINT api_keys_key_hash_unique UNIQUE (key_hash),
  CONSTRAINT api_keys_user_id_users_id_fk FOREIGN KEY (user_id) REFERENCES users(id) ON DELETE CASCADE
);
CREATE INDEX api_keys_mgmt_idx ON public.api_keys USING btree (management_key_id);
CREATE INDEX api_keys_user_idx ON public.api_keys USING btree (user_id);

CREATE TABLE public.holds (
  id uuid NOT NULL,
  user_id uuid NOT NULL,
  key_id uuid,
  org_ids uuid[] NOT NULL DEFAULT '{}'::uuid[],
  month text NOT NULL,
  amount_micro bigint NOT NULL,
  tokens bigint NOT NULL DEFAULT 0,
  status text NOT NULL DEFAULT 'open'::text,
  charged_micro bigint,
  created_at timestamp with time zone NOT NULL DEFAULT now(),
  expires_at timestamp with time zone NOT NULL,
  closed_at timestamp with time zone,
  lease boolean NOT NULL DEFAULT false,
  moved_upto bigint NOT NULL DEFAULT 0,
  CONSTRAINT holds_pkey PRIMARY KEY (id)
);
CREATE INDEX holds_open_idx ON public.holds USING btree (expires_at) WHERE (status = 'open'::text);
CREATE INDEX holds_user_idx ON public.holds USING btree (user_id);

CREATE TABLE public.key_monthly (
  key_id uuid NOT NULL,
  month text NOT NULL,
  spent_micro bigint NOT NULL DEFAULT 0,
  held_micro bigint NOT NULL DEFAULT 0,
  tokens bigint NOT NULL DEFAULT 0,
  held_tokens bigint NOT NULL DEFAULT 0,
  requests bigint NOT NULL DEFAULT 0,
  CONSTRAINT key_monthly_key_id_month_pk PRIMARY KEY (key_id, month)
);

CREATE TABLE public.ledger_entries (
  id bigint NOT NULL DEFAULT nextval('ledger_entries_id_seq'::regclass),
  user_id uuid NOT NULL,
  kind text NOT NULL,
  amount_micro bigint NOT NULL,
  request_id uuid,
  meta jsonb,
  created_at timestamp with time zone NOT NULL DEFAULT now(),
  lease_id uuid,
  CONSTRAINT ledger_entries_pkey PRIMARY KEY (id),
  CONSTRAINT ledger_entries_request_id_unique UNIQUE (request_id)
);
CREATE INDEX ledger_lease_idx ON public.ledger_entries USING btree (lease_id, id) WHERE (lease_id IS NOT NULL);
CREATE INDEX ledger_user_idx ON public.ledger_entries USING btree (user_id, created_at);

CREATE TABLE public.org_member_monthly (
  org_id uuid NOT NULL,
  user_id uuid NOT NULL,
  month text NOT NULL,
  spent_micro bigint NOT NULL DEFAULT 0,
  held_micro bigint NOT NULL DEFAULT 0,
  CONSTRAINT org_member_monthly_org_id_user_id_month_pk PRIMARY KEY (org_id, user_id, month)
);

CREATE TABLE public.org_members (
  org_id uuid NOT NULL,
  user_id uuid NOT NULL,
  role text NOT NULL,
  monthly_budget_krw bigint,
  created_at timestamp with time zone NOT NULL DEFAULT now(),
  CONSTRAINT org_members_org_id_user_id_pk PRIMARY KEY (org_id, user_id),
  CONSTRAINT org_members_org_id_orgs_id_fk FOREIGN KEY (org_id) REFERENCES orgs(id) ON DELETE CASCADE,
  CONSTRAINT org_members_user_id_users_id_fk FOREIGN KEY (user_id) REFERENCES users(id) ON DELETE CASCADE
);
CREATE INDEX org_members_user_idx ON public.org_members USING btree (user_id);

CREATE TABLE public.payments (
  order_id text NOT NULL,
  user_id uuid NOT NULL,
  provider text NOT NULL,
  provider_payment_id text,
  amount_krw bigint NOT NULL,
  fee_krw bigint NOT NULL,
  credit_micro bigint NOT NULL,
  status text NOT NULL DEFAULT 'pending'::text,
  refunded_krw bigint NOT NULL DEFAULT 0,
  failure_code text,
  failure_message text,
  created_at timestamp with time zone NOT NULL DEFAULT now(),
  updated_at timestamp with time zone NOT NULL DEFAULT now(),
  paid_at timestamp with time zone,
  CONSTRAINT payments_pkey PRIMARY KEY (order_id)
);
CREATE UNIQUE INDEX payments_provider_payment_uq ON public.payments USING btree (provider, provider_payment_id);
CREATE INDEX payments_user_idx ON public.payments USING btree (user_id, created_at);

CREATE TABLE public.stats_rollup_state (
  id smallint NOT NULL,
  watermark bigint NOT NULL DEFAULT 0,
  holes jsonb NOT NULL DEFAULT '[]'::jsonb,
  version bigint NOT NULL DEFAULT 0,
  events_folded bigint NOT NULL DEFAULT 0,
  updated_at timestamp with time zone NOT NULL DEFAULT now(),
  pruned_at timestamp with time zone,
  CONSTRAINT stats_rollup_state_pkey PRIMARY KEY (id)
);

CREATE TABLE public.topup_idempotency (
  idem_key text NOT NULL,
  user_id uuid NOT NULL,
  body_hash text NOT NULL,
  paid_krw bigint NOT NULL,
  balance_micro bigint NOT NULL,
  created_at timestamp with time zone NOT NULL DEFAULT now(),
  CONSTRAINT topup_idempotency_pkey PRIMARY KEY (idem_key)
);

CREATE TABLE public.usage_events (
  id bigint NOT NULL DEFAULT nextval('usage_events_id_seq'::regclass),
  request_id uuid NOT NULL,
  user_id uuid NOT NULL,
  key_id uuid,
  model text NOT NULL,
  provider text,
  maker text,
  modality text NOT NULL DEFAULT 'text'::text,
  app text,
  status integer NOT NULL,
  prompt_tokens integer NOT NULL DEFAULT 0,
  completion_tokens integer NOT NULL DEFAULT 0,
  cached_tokens integer NOT NULL DEFAULT 0,
  cache_write_tokens integer NOT NULL DEFAULT 0,
  cost_micro bigint NOT NULL DEFAULT 0,
  fx_milli bigint,
  latency_ms integer,
  cached boolean NOT NULL DEFAULT false,
  created_at timestamp with time zone NOT NULL DEFAULT now(),
  api text,
  streamed boolean,
  ttft_ms integer,
  error_code text,
  policy_decision text,
  CONSTRAINT usage_events_pkey PRIMARY KEY (id, created_at)
) PARTITION BY RANGE (created_at);
CREATE INDEX usage_events_key_idx ON ONLY public.usage_events USING btree (key_id, created_at);
CREATE INDEX usage_events_request_idx ON ONLY public.usage_events USING btree (request_id);
CREATE INDEX usage_events_user_idx ON ONLY public.usage_events USING btree (user_id, created_at);

CREATE TABLE public.users (
  id uuid NOT NULL DEFAULT gen_random_uuid(),
  email text NOT NULL,
  password_hash text NOT NULL,
  industry text NOT NULL DEFAULT 'general'::text,
  regulated boolean NOT NULL DEFAULT false,
  xborder_training_consent boolean NOT NULL DEFAULT false,
  balance_micro bigint NOT NULL DEFAULT 0,
  held_micro bigint NOT NULL DEFAULT 0,
  deleted_at timestamp with time zone,
  created_at timestamp with time zone NOT NULL DEFAULT now(),
  CONSTRAINT users_pkey PRIMARY KEY (id),
  CONSTRAINT users_email_unique UNIQUE (email)
);
