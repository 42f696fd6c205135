-- Credit leases (src/db/repos/leases.ts). A busy key's calls are held in memory against a lease:
-- one hold, placed by gw_hold like any other (every check: balance, key budget and token limit,
-- org budgets), flagged `lease`. Its calls are charged against it in batches behind their
-- answers, each call exactly once (its usage event is its receipt: the request id is unique);
-- what they spend leaves the lease and the account's held amount. The instance gives back what
-- its calls no longer need (trim) and closes the lease when its last call is charged. A lease
-- whose instance died expires and is closed by the sweeper like any hold.
ALTER TABLE "holds" ADD COLUMN "lease" boolean DEFAULT false NOT NULL;
--> statement-breakpoint
CREATE FUNCTION gw_lease_open(p_id uuid, p_user uuid, p_key uuid, p_month text, p_amount bigint, p_tokens bigint, p_ttl_seconds int)
RETURNS TABLE(r text, free_micro bigint, free_tokens bigint)
LANGUAGE plpgsql AS $$
DECLARE x record;
BEGIN
  SELECT * INTO x FROM gw_hold(p_id, p_user, p_key, p_month, p_amount, p_tokens, p_ttl_seconds);
  IF x.r = 'ok' THEN
    UPDATE holds SET lease = true WHERE id = p_id;
  END IF;
  RETURN QUERY SELECT x.r, x.free_micro, x.free_tokens;
END $$;
--> statement-breakpoint
-- Charges calls made under leases. A call whose usage event is already stored was charged
-- before and moves nothing ('not_open'). Each open lease gives up what its calls spent (never
-- more than it still holds), and the account, key and org counters move by the sums; a lease
-- already closed (expired and swept) only has its calls charged to the balance, since its held
-- amount was given back in full when it closed. The charge's ledger entry names its lease.
CREATE FUNCTION gw_lease_charge(p_lease uuid[], p_id uuid[], p_cost bigint[], p_tokens bigint[], p_event jsonb[])
RETURNS TABLE(n int, r text)
LANGUAGE plpgsql SET enable_seqscan = off AS $$
#variable_conflict use_column
BEGIN
  PERFORM 1 FROM users WHERE id IN (SELECT h.user_id FROM holds h WHERE h.id = ANY(p_lease)) ORDER BY id FOR UPDATE;
  PERFORM 1 FROM holds WHERE id = ANY(p_lease) AND lease ORDER BY id FOR UPDATE;
  RETURN QUERY
  WITH input AS (
    SELECT DISTINCT ON (t.id) t.* FROM unnest(p_lease, p_id, p_cost, p_tokens, p_event) WITH ORDINALITY AS t(lease, id, c, tk, e, n)
      ORDER BY t.id, t.n
  ), lease AS (
    SELECT h.id, h.user_id, h.key_id, h.org_ids, h.month, h.amount_micro, h.tokens, h.closed_at IS NULL AS open
      FROM holds h WHERE h.id = ANY(p_lease) AND h.lease
  ), fresh AS (
    INSERT INTO usage_events (request_id, user_id, key_id, model, provider, maker, modality, app, status,
      prompt_tokens, completion_tokens, cached_tokens, cache_write_tokens, cost_micro, fx_milli, latency_ms, cached)
    SELECT i.id, l.user_id, l.key_id, coalesce(e.model, 'unknown'), e.provider, e.maker, coalesce(e.modality, 'text'), e.app,
      coalesce(e.status, 200), coalesce(e.prompt_tokens, 0), coalesce(e.completion_tokens, 0), coalesce(e.cached_tokens, 0),
      coalesce(e.cache_write_tokens, 0), i.c, e.fx_milli, e.latency_ms, coalesce(e.cached, false)
    FROM input i JOIN lease l ON l.id = i.lease,
      jsonb_to_record(coalesce(i.e, '{}'::jsonb)) AS e(model text, provider text, maker text, modality text, app text, status int,
        prompt_tokens int, completion_tokens int, cached_tokens int, cache_write_tokens int, fx_milli bigint, latency_ms int, cached boolean)
    ON CONFLICT (request_id) DO NOTHING
    RETURNING request_id
  ), done AS (
    SELECT i.lease, i.id, i.c, i.tk, l.user_id FROM input i JOIN fresh f ON f.request_id = i.id JOIN lease l ON l.id = i.lease
  ), per_lease AS (
    SELECT l.id, l.user_id, l.key_id, l.org_ids, l.month, s.c, s.tk, s.calls,
      CASE WHEN l.open THEN least(s.c, l.amount_micro) ELSE 0 END AS a,
      CASE WHEN l.open THEN least(s.tk, l.tokens) ELSE 0 END AS at
    FROM (SELECT lease, sum(c) AS c, sum(tk) AS tk, count(*) AS calls FROM done GROUP BY lease) s JOIN lease l ON l.id = s.lease
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
  SELECT t.n::int, CASE WHEN f.request_id IS NULL THEN 'not_open' ELSE 'ok' END
    FROM unnest(p_id) WITH ORDINALITY AS t(id, n) LEFT JOIN fresh f ON f.request_id = t.id
    ORDER BY t.n;
END $$;
--> statement-breakpoint
-- Gives back what a lease holds beyond `p_keep_micro` / `p_keep_tokens` (what its calls still in
-- flight may spend), or everything when `p_close`, which also closes it ('settled': its
-- charged_micro is what its calls spent).
CREATE FUNCTION gw_lease_trim(p_lease uuid, p_keep_micro bigint, p_keep_tokens bigint, p_close boolean)
RETURNS text LANGUAGE plpgsql AS $$
DECLARE h record; dm bigint; dt bigint;
BEGIN
  PERFORM 1 FROM users WHERE id = (SELECT user_id FROM holds WHERE id = p_lease) FOR UPDATE;
  SELECT * INTO h FROM holds WHERE id = p_lease AND lease AND closed_at IS NULL FOR UPDATE;
  IF NOT FOUND THEN RETURN 'not_open'; END IF;
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
END $$;
