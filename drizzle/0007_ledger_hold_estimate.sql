-- gw_hold also answers how much room is left after it: the account's free credits, bounded by
-- the key's and the org memberships' monthly budgets (micro-won), and the key's monthly token
-- room (NULL without a token limit). The gateway keeps these as an estimate per key to decide
-- whether it may start the upstream call while the hold is still on its way
-- (src/core/billing/hold-estimate.ts); the hold itself stays the only authority on money. Same checks, same
-- lock order and same effects as 0001's version.
DROP FUNCTION IF EXISTS gw_hold(uuid, uuid, uuid, text, bigint, bigint, int);
--> statement-breakpoint
CREATE FUNCTION gw_hold(p_id uuid, p_user uuid, p_key uuid, p_month text, p_amount bigint, p_tokens bigint, p_ttl_seconds int,
  OUT r text, OUT free_micro bigint, OUT free_tokens bigint)
LANGUAGE plpgsql AS $$
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
END $$;
