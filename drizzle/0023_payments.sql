-- Self-service top-ups through a payment provider (docs/payments.md). One row per order; the
-- provider's payment id is unique per provider, so no provider payment can credit two orders.
-- Every state change that moves money (paid, refunded) is one of the functions below: the row
-- is locked, its state checked and changed, and the ledger moved in the same transaction, so a
-- replayed, reordered or concurrent webhook or return credits nothing extra.
CREATE TABLE "payments" (
	"order_id" text PRIMARY KEY NOT NULL,
	"user_id" uuid NOT NULL,
	"provider" text NOT NULL,
	"provider_payment_id" text,
	"amount_krw" bigint NOT NULL,
	"fee_krw" bigint NOT NULL,
	"credit_micro" bigint NOT NULL,
	"status" text DEFAULT 'pending' NOT NULL,
	"refunded_krw" bigint DEFAULT 0 NOT NULL,
	"failure_code" text,
	"failure_message" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	"paid_at" timestamp with time zone
);
--> statement-breakpoint
CREATE UNIQUE INDEX "payments_provider_payment_uq" ON "payments" USING btree ("provider","provider_payment_id");
--> statement-breakpoint
CREATE INDEX "payments_user_idx" ON "payments" USING btree ("user_id","created_at");
--> statement-breakpoint
-- A verified paid payment: credits the order's net amount once. Returns (state, balance_micro):
-- 'credited' (now), 'already' (credited before, or refunded: nothing moves), 'unknown' (no such
-- order), 'amount_mismatch' (the provider's amount is not the order's: nothing moves), or
-- 'payment_reused' (that provider payment already paid another order).
CREATE OR REPLACE FUNCTION gw_payment_paid(p_order text, p_payment text, p_amount bigint)
RETURNS TABLE (state text, balance_micro bigint) LANGUAGE plpgsql AS $$
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
END $$;
--> statement-breakpoint
-- A payment that did not go through (declined, canceled at the checkout, expired): recorded on
-- an order that has not been paid; a paid order never goes back. Returns whether it changed.
CREATE OR REPLACE FUNCTION gw_payment_failed(p_order text, p_status text, p_code text, p_message text)
RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN
  UPDATE payments SET status = p_status, failure_code = p_code, failure_message = p_message, updated_at = now()
    WHERE order_id = p_order AND status IN ('pending', 'failed', 'canceled');
  RETURN FOUND;
END $$;
--> statement-breakpoint
-- A refund at the provider: p_total is the provider's total refunded so far (KRW). The credit
-- share of what is newly refunded (credit × refunded ÷ paid, to the micro-won) is taken back,
-- at most the account's free credit (never below zero; the rest is noted as uncollected).
-- Returns the micro-won taken now, or NULL when nothing changed (a replay, an older total).
CREATE OR REPLACE FUNCTION gw_payment_refunded(p_order text, p_total bigint)
RETURNS bigint LANGUAGE plpgsql AS $$
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
END $$;
--> statement-breakpoint
-- Auto top-up (docs/payments.md, "Auto top-up"): one row per account; off until the account
-- saves a card at the provider (a billing key) and turns it on. last_attempt_at is the claim
-- an instance takes before charging, so two instances never charge for the same shortfall.
CREATE TABLE "auto_topups" (
	"user_id" uuid PRIMARY KEY NOT NULL,
	"provider" text NOT NULL,
	"customer_key" text NOT NULL,
	"billing_key" text,
	"card_label" text,
	"enabled" boolean DEFAULT false NOT NULL,
	"threshold_krw" bigint DEFAULT 0 NOT NULL,
	"amount_krw" bigint DEFAULT 0 NOT NULL,
	"last_attempt_at" timestamp with time zone,
	"last_error" text,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX "auto_topups_customer_uq" ON "auto_topups" USING btree ("customer_key");
