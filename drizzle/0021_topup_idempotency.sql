-- Operator top-ups with an Idempotency-Key (docs/ledger.md, "Top-ups"): one row per key, written
-- in the same transaction as the credit, so the same key credits once however often and however
-- concurrently it is sent; a replay answers the first top-up's figures.
CREATE TABLE "topup_idempotency" (
	"idem_key" text PRIMARY KEY NOT NULL,
	"user_id" uuid NOT NULL,
	"body_hash" text NOT NULL,
	"paid_krw" bigint NOT NULL,
	"balance_micro" bigint NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
-- Returns (state, balance_micro): 'new' (credited now), 'replay' (the same key and body:
-- nothing credited, the first balance), 'reused' (the same key, another body), or 'missing' (no
-- live account; nothing recorded). A concurrent insert of the same key waits on the primary key
-- until the first transaction commits, then reads its row.
CREATE OR REPLACE FUNCTION gw_topup_once(p_key text, p_hash text, p_user uuid, p_amount bigint, p_paid bigint, p_meta jsonb)
RETURNS TABLE (state text, balance_micro bigint) LANGUAGE plpgsql AS $$
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
END $$;
