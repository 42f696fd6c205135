-- A batch of holds, or of settles, as a few set-based statements instead of one function call
-- (eight to ten statements) per call: under load the gateway sends its ledger calls in
-- batches (src/db/repos/ledger-batch.ts), and PostgreSQL's CPU per call was the larger half
-- of the machine's (bench/cpu-split.ts). Each keeps the single-call functions' semantics and
-- lock order (users rows by ascending id first; key_monthly and org rows are only ever
-- written under their user's lock). Whatever the common case does not cover falls back to
-- the single-call function, one call at a time, in order, in the same transaction.
--
-- `SET enable_seqscan = off`: every access here is by key, but PL/pgSQL keeps a generic plan
-- made while the tables were small, and for `id = ANY(array)` that plan is a sequential scan
-- of `holds`, which makes every batch slower as the table grows (seen in the benchmark:
-- 2,900 → 1,400 requests/s over 15 s, millions of rows read by seq scans).

-- The common case of a hold batch: new distinct ids, live accounts whose free credits cover
-- the sum of their holds, keys whose monthly budget and token limit cover theirs, no org
-- budget. Then every hold passes, as it would one by one, and the room reported to each is
-- the room left after the whole batch (never more than one by one would report).
CREATE FUNCTION gw_hold_many(p_id uuid[], p_user uuid[], p_key uuid[], p_month text[], p_amount bigint[], p_tokens bigint[], p_ttl int[])
RETURNS TABLE(n int, r text, free_micro bigint, free_tokens bigint)
LANGUAGE plpgsql SET enable_seqscan = off AS $$
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
END $$;
--> statement-breakpoint
-- A batch of settles: each open hold closes exactly once (a hold already closed answers
-- 'not_open' and moves nothing), and the account, key and org counters move by the sums of
-- what closed. The same request id twice in one batch goes one call at a time instead.
CREATE FUNCTION gw_settle_many(p_id uuid[], p_cost bigint[], p_tokens bigint[], p_event jsonb[])
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
    UPDATE holds h SET status = 'settled', charged_micro = i.c, closed_at = now()
      FROM input i
      WHERE h.id = i.id AND h.status = 'open'
      RETURNING h.id, h.user_id, h.key_id, h.org_ids, h.month, h.amount_micro, h.tokens AS held_tokens, i.c, i.tk, i.e
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
  SELECT i.n::int, CASE WHEN x.id IS NULL THEN 'not_open' ELSE 'ok' END
    FROM input i LEFT JOIN closed x ON x.id = i.id
    ORDER BY i.n;
END $$;
