-- One ledger step: the settles, then the holds, that queued up while the gateway's previous
-- ledger statements were in flight, in one transaction (one commit, one round trip) instead
-- of two. Settles go first so the credits they give back are there for the holds. Every
-- account the step touches is locked once, up front, in ascending id order (the order every
-- ledger function locks in), so two steps cannot deadlock.
CREATE FUNCTION gw_ledger_step(s_id uuid[], s_cost bigint[], s_tokens bigint[], s_event jsonb[],
  h_id uuid[], h_user uuid[], h_key uuid[], h_month text[], h_amount bigint[], h_tokens bigint[], h_ttl int[])
RETURNS TABLE(kind text, n int, r text, free_micro bigint, free_tokens bigint)
LANGUAGE plpgsql SET enable_seqscan = off AS $$
#variable_conflict use_column
BEGIN
  PERFORM 1 FROM users
    WHERE id = ANY(h_user) OR id IN (SELECT h.user_id FROM holds h WHERE h.id = ANY(s_id))
    ORDER BY id FOR UPDATE;
  IF cardinality(s_id) > 0 THEN
    RETURN QUERY SELECT 's'::text, x.n, x.r, NULL::bigint, NULL::bigint FROM gw_settle_many(s_id, s_cost, s_tokens, s_event) x;
  END IF;
  IF cardinality(h_id) > 0 THEN
    RETURN QUERY SELECT 'h'::text, x.n, x.r, x.free_micro, x.free_tokens FROM gw_hold_many(h_id, h_user, h_key, h_month, h_amount, h_tokens, h_ttl) x;
  END IF;
END $$;
