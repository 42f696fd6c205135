-- A leased call's durable charge is appended rows only (docs/ledger.md, "Where a leased call's
-- money is"; docs/decisions.md #55). gw_lease_charge of an open lease that covers its calls
-- inserts each call's usage event and ledger entry and updates no row: no lock on the account's
-- row, so several charge statements run at once and their commits share one WAL flush. The
-- money moves between balances once per lease step, in gw_lease_trim (the trim, the close, the
-- sweeper's close): it sums the lease's ledger entries since the last move (`holds.moved_upto`,
-- an entry id; `ledger_entries.lease_id`) and updates the account, key month, organization and
-- lease rows once.
ALTER TABLE "ledger_entries" ADD COLUMN "lease_id" uuid;
--> statement-breakpoint
CREATE INDEX "ledger_lease_idx" ON "ledger_entries" ("lease_id", "id") WHERE "lease_id" IS NOT NULL;
--> statement-breakpoint
ALTER TABLE "holds" ADD COLUMN "moved_upto" bigint DEFAULT 0 NOT NULL;
--> statement-breakpoint
-- The charge of calls whose lease is closed (a late charge, from free credits only, never below
-- zero) or does not cover them: the former gw_lease_charge (drizzle/0018), its body unchanged.
CREATE FUNCTION gw_lease_charge_late(p_lease uuid[], p_id uuid[], p_cost bigint[], p_hold bigint[], p_tokens bigint[], p_event jsonb[])
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
--> statement-breakpoint
CREATE FUNCTION gw_lease_covers(p_lease uuid[], p_cost bigint[], p_hold bigint[]) RETURNS boolean
LANGUAGE sql STABLE SET enable_seqscan = off AS $$
  -- Whether every lease is open and its reserved room covers the batch's charges (each capped at
  -- its call's hold). The room still counts what was charged since the last move, so this bounds
  -- one statement, not the lease's whole life: that the calls of all its statements together fit
  -- is the in-memory policy's promise (docs/ledger.md, invariant 6), and the move never takes a
  -- balance below zero if it were broken (gw_lease_move). One row read per lease, no scan.
  WITH asked AS (
    SELECT t.lease, sum(greatest(0, least(t.c, t.hold))) AS c FROM unnest(p_lease, p_cost, p_hold) AS t(lease, c, hold) GROUP BY t.lease
  )
  SELECT coalesce(bool_and(h.id IS NOT NULL AND h.closed_at IS NULL AND h.lease AND a.c <= h.amount_micro), false)
    FROM asked a LEFT JOIN holds h ON h.id = a.lease;
$$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION gw_lease_charge(p_lease uuid[], p_id uuid[], p_cost bigint[], p_hold bigint[], p_tokens bigint[], p_event jsonb[])
RETURNS TABLE(n int, r text)
LANGUAGE plpgsql SET enable_seqscan = off AS $$
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
    -- The usage event is the receipt: a call charged before is not charged again.
    INSERT INTO usage_events (request_id, user_id, key_id, model, provider, maker, modality, app, status,
      prompt_tokens, completion_tokens, cached_tokens, cache_write_tokens, cost_micro, fx_milli, latency_ms, cached,
      api, streamed, ttft_ms, error_code, policy_decision)
    SELECT i.id, l.user_id, l.key_id, coalesce(e.model, 'unknown'), e.provider, e.maker, coalesce(e.modality, 'text'), e.app,
      coalesce(e.status, 200), coalesce(e.prompt_tokens, 0), coalesce(e.completion_tokens, 0), coalesce(e.cached_tokens, 0),
      coalesce(e.cache_write_tokens, 0), i.c, e.fx_milli, e.latency_ms, coalesce(e.cached, false),
      e.api, e.streamed, e.ttft_ms, e.error_code, e.policy_decision
    FROM input i JOIN lease l ON l.id = i.lease,
      jsonb_to_record(coalesce(i.e, '{}'::jsonb)) AS e(model text, provider text, maker text, modality text, app text, status int,
        prompt_tokens int, completion_tokens int, cached_tokens int, cache_write_tokens int, fx_milli bigint, latency_ms int, cached boolean,
        api text, streamed boolean, ttft_ms int, error_code text, policy_decision text)
    ON CONFLICT (request_id) DO NOTHING
    RETURNING request_id
  ), done AS (
    SELECT i.lease, i.id, i.c, i.asked, i.tk, l.user_id FROM input i JOIN fresh f ON f.request_id = i.id JOIN lease l ON l.id = i.lease
  ), charged AS (
    -- One entry per call, free calls included: the move counts the key's requests and tokens from them.
    INSERT INTO ledger_entries (user_id, kind, amount_micro, request_id, meta, lease_id)
      SELECT user_id, 'charge', -c, id, jsonb_build_object('lease', lease, 'tokens', tk), lease FROM done
  )
  SELECT t.n::int, CASE WHEN d.id IS NULL THEN 'not_open' WHEN d.c < d.asked THEN 'capped' ELSE 'ok' END
    FROM unnest(p_id) WITH ORDINALITY AS t(id, n) LEFT JOIN done d ON d.id = t.id
    ORDER BY t.n;
END $$;
--> statement-breakpoint
-- Moves what the lease's calls were charged since the last move: the caller holds the account's
-- and the lease's row locks. What the lease does not cover (only if the in-memory policy
-- over-promised) comes from free credits; what those cannot pay either is written back as a
-- `cap_refund` entry, so no balance goes below zero and the books show the gap.
CREATE FUNCTION gw_lease_move(p_lease uuid) RETURNS void
LANGUAGE plpgsql SET enable_seqscan = off AS $$
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
END $$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION gw_lease_trim(p_lease uuid, p_keep_micro bigint, p_keep_tokens bigint, p_close boolean)
RETURNS text LANGUAGE plpgsql AS $$
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
END $$;
