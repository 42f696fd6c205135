-- The ledger's atomic steps. Each is one function call (one round trip) and runs in one
-- transaction: a hold checks every limit and reserves credits; a settle charges actual usage,
-- releases the hold, bumps the monthly counters and writes the usage event; a release gives
-- the hold back. A hold closes at most once (status 'open' → 'settled' | 'released'), and a
-- charge carries the request id under a unique index, so money never moves twice.
-- Lock order everywhere: users row, then key_monthly, then org_member_monthly by org id.

CREATE OR REPLACE FUNCTION gw_insert_usage(p_id uuid, p_user uuid, p_key uuid, p_cost bigint, p_event jsonb)
RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO usage_events (request_id, user_id, key_id, model, provider, maker, modality, app, status,
    prompt_tokens, completion_tokens, cached_tokens, cache_write_tokens, cost_micro, fx_milli, latency_ms, cached)
  SELECT p_id, p_user, p_key, coalesce(e.model, 'unknown'), e.provider, e.maker, coalesce(e.modality, 'text'), e.app,
    coalesce(e.status, 200), coalesce(e.prompt_tokens, 0), coalesce(e.completion_tokens, 0), coalesce(e.cached_tokens, 0),
    coalesce(e.cache_write_tokens, 0), p_cost, e.fx_milli, e.latency_ms, coalesce(e.cached, false)
  FROM jsonb_to_record(p_event) AS e(model text, provider text, maker text, modality text, app text, status int,
    prompt_tokens int, completion_tokens int, cached_tokens int, cache_write_tokens int, fx_milli bigint, latency_ms int, cached boolean)
  ON CONFLICT (request_id) DO NOTHING;
END $$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION gw_hold(p_id uuid, p_user uuid, p_key uuid, p_month text, p_amount bigint, p_tokens bigint, p_ttl_seconds int)
RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  u record; k record; m record; om record; mm record;
  orgs uuid[] := '{}';
BEGIN
  SELECT balance_micro, held_micro INTO u FROM users WHERE id = p_user AND deleted_at IS NULL FOR UPDATE;
  IF NOT FOUND THEN RETURN 'unauthorized'; END IF;
  IF EXISTS (SELECT 1 FROM holds WHERE id = p_id) THEN RETURN 'duplicate'; END IF;
  IF u.balance_micro - u.held_micro < p_amount THEN RETURN 'insufficient_credits'; END IF;
  IF p_key IS NOT NULL THEN
    SELECT monthly_budget_krw, monthly_token_limit INTO k FROM api_keys WHERE id = p_key;
    INSERT INTO key_monthly (key_id, month) VALUES (p_key, p_month) ON CONFLICT DO NOTHING;
    SELECT spent_micro, held_micro, tokens, held_tokens INTO m FROM key_monthly WHERE key_id = p_key AND month = p_month FOR UPDATE;
    IF k.monthly_budget_krw IS NOT NULL AND m.spent_micro + m.held_micro + p_amount > k.monthly_budget_krw::bigint * 1000000 THEN
      RETURN 'monthly_budget_exceeded';
    END IF;
    IF k.monthly_token_limit IS NOT NULL AND m.tokens + m.held_tokens + p_tokens > k.monthly_token_limit THEN
      RETURN 'monthly_token_quota_exceeded';
    END IF;
  END IF;
  FOR om IN SELECT org_id, monthly_budget_krw FROM org_members WHERE user_id = p_user AND monthly_budget_krw IS NOT NULL ORDER BY org_id LOOP
    INSERT INTO org_member_monthly (org_id, user_id, month) VALUES (om.org_id, p_user, p_month) ON CONFLICT DO NOTHING;
    SELECT spent_micro, held_micro INTO mm FROM org_member_monthly WHERE org_id = om.org_id AND user_id = p_user AND month = p_month FOR UPDATE;
    IF mm.spent_micro + mm.held_micro + p_amount > om.monthly_budget_krw::bigint * 1000000 THEN
      RETURN 'org_member_monthly_budget_exceeded';
    END IF;
    orgs := orgs || om.org_id;
  END LOOP;
  UPDATE users SET held_micro = held_micro + p_amount WHERE id = p_user;
  IF p_key IS NOT NULL THEN
    UPDATE key_monthly SET held_micro = held_micro + p_amount, held_tokens = held_tokens + p_tokens WHERE key_id = p_key AND month = p_month;
  END IF;
  UPDATE org_member_monthly SET held_micro = held_micro + p_amount WHERE user_id = p_user AND month = p_month AND org_id = ANY(orgs);
  INSERT INTO holds (id, user_id, key_id, org_ids, month, amount_micro, tokens, expires_at)
  VALUES (p_id, p_user, p_key, orgs, p_month, p_amount, p_tokens, now() + make_interval(secs => p_ttl_seconds));
  RETURN 'ok';
END $$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION gw_settle(p_id uuid, p_cost bigint, p_tokens bigint, p_event jsonb)
RETURNS text LANGUAGE plpgsql AS $$
DECLARE h record;
BEGIN
  -- Lock the user first (same order as gw_hold), then close the hold exactly once.
  PERFORM 1 FROM users WHERE id = (SELECT user_id FROM holds WHERE id = p_id) FOR UPDATE;
  UPDATE holds SET status = 'settled', charged_micro = p_cost, closed_at = now()
    WHERE id = p_id AND status = 'open' RETURNING * INTO h;
  IF NOT FOUND THEN RETURN 'not_open'; END IF;
  UPDATE users SET held_micro = held_micro - h.amount_micro, balance_micro = balance_micro - p_cost WHERE id = h.user_id;
  IF h.key_id IS NOT NULL THEN
    UPDATE key_monthly SET held_micro = held_micro - h.amount_micro, held_tokens = held_tokens - h.tokens,
      spent_micro = spent_micro + p_cost, tokens = tokens + p_tokens, requests = requests + 1
      WHERE key_id = h.key_id AND month = h.month;
  END IF;
  UPDATE org_member_monthly SET held_micro = held_micro - h.amount_micro, spent_micro = spent_micro + p_cost
    WHERE user_id = h.user_id AND month = h.month AND org_id = ANY(h.org_ids);
  IF p_cost <> 0 THEN
    INSERT INTO ledger_entries (user_id, kind, amount_micro, request_id) VALUES (h.user_id, 'charge', -p_cost, p_id);
  END IF;
  IF p_event IS NOT NULL THEN
    PERFORM gw_insert_usage(p_id, h.user_id, h.key_id, p_cost, p_event);
  END IF;
  RETURN 'ok';
END $$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION gw_release(p_id uuid, p_event jsonb)
RETURNS text LANGUAGE plpgsql AS $$
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
END $$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION gw_topup(p_user uuid, p_amount bigint, p_meta jsonb)
RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE b bigint;
BEGIN
  UPDATE users SET balance_micro = balance_micro + p_amount WHERE id = p_user AND deleted_at IS NULL RETURNING balance_micro INTO b;
  IF NOT FOUND THEN RETURN NULL; END IF;
  INSERT INTO ledger_entries (user_id, kind, amount_micro, meta) VALUES (p_user, 'topup', p_amount, p_meta);
  RETURN b;
END $$;
