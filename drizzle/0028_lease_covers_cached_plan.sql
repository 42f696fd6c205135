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
