-- gw_lease_covers as PL/pgSQL (docs/decisions.md #63). As a SQL-language function with a SET
-- clause it could not be inlined, and such a function plans its query again on every call: 109
-- µs of PostgreSQL CPU per call, twice per leased charge statement, 60 % of a one-call
-- statement's time in gw_lease_charge. PL/pgSQL keeps the plan for the session. It runs inside
-- gw_lease_charge, whose own SET enable_seqscan = off holds for it, so it needs no SET of its own.
CREATE OR REPLACE FUNCTION gw_lease_covers(p_lease uuid[], p_cost bigint[], p_hold bigint[]) RETURNS boolean
LANGUAGE plpgsql STABLE SET plan_cache_mode = force_generic_plan AS $$
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
END $$;
--> statement-breakpoint
-- The charge statement's own query likewise: with array parameters PostgreSQL's plan cache kept
-- choosing a fresh custom plan per call; the generic plan is the same shape (every join is by
-- primary key, seq scans off).
ALTER FUNCTION gw_lease_charge(uuid[], uuid[], bigint[], bigint[], bigint[], jsonb[]) SET plan_cache_mode = force_generic_plan;
--> statement-breakpoint
-- The held path's steps (calls of keys without a lease; a lone call goes to gw_hold / gw_settle,
-- so a step carries 2 or more) by batch size: a step of at most 8 calls gets generic plans
-- (backend CPU per call about a third lower at 2, 4 and 8 calls), a bigger one custom plans,
-- alike or better from 16 calls on and under load (docs/decisions.md #63). The setting is local
-- to this call: the function's own SET clause restores it on the way out.
CREATE OR REPLACE FUNCTION gw_ledger_step(s_id uuid[], s_cost bigint[], s_tokens bigint[], s_event jsonb[], h_id uuid[], h_user uuid[], h_key uuid[], h_month text[], h_amount bigint[], h_tokens bigint[], h_ttl integer[])
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
