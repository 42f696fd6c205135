/**
 * Payments (drizzle/0023): orders, their state changes through the migration's functions (each
 * one transaction with its ledger entry), and the account's billing history with its running
 * balance, read from the ledger itself.
 */
import type { Database } from "../client";
import type { AutoTopupRow, DueAutoTopup, HistoryRow, PaymentRow, PaymentStore } from "../../core/payments/store";

export type { HistoryRow, PaymentRow };

const COLS = `order_id, user_id, provider, provider_payment_id, amount_krw::text,
  fee_krw::text, credit_micro::text, status, refunded_krw::text, failure_code, failure_message,
  created_at, paid_at`;

const AUTO_COLS = `a.user_id, a.provider, a.customer_key, a.billing_key, a.card_label, a.enabled,
  a.threshold_krw::text, a.amount_krw::text, a.last_error`;

function autoRow(r: any): AutoTopupRow {
  return {
    userId: r.user_id,
    provider: r.provider,
    customerKey: r.customer_key,
    billingKey: r.billing_key,
    cardLabel: r.card_label,
    enabled: r.enabled,
    thresholdKrw: Number(r.threshold_krw),
    amountKrw: Number(r.amount_krw),
    lastError: r.last_error,
  };
}

function row(r: any): PaymentRow {
  return {
    orderId: r.order_id,
    userId: r.user_id,
    provider: r.provider,
    providerPaymentId: r.provider_payment_id,
    amountKrw: Number(r.amount_krw),
    feeKrw: Number(r.fee_krw),
    creditMicro: BigInt(r.credit_micro),
    status: r.status,
    refundedKrw: Number(r.refunded_krw),
    failureCode: r.failure_code,
    failureMessage: r.failure_message,
    createdAt: new Date(r.created_at).toISOString(),
    paidAt: r.paid_at ? new Date(r.paid_at).toISOString() : null,
  };
}

export class PaymentRepo implements PaymentStore {
  constructor(private readonly db: Database) {}

  async create(p: {
    orderId: string;
    userId: string;
    provider: string;
    amountKrw: number;
    feeKrw: number;
    creditMicro: bigint;
  }): Promise<PaymentRow> {
    const rows = await this.db.query(
      `insert into payments (order_id, user_id, provider, amount_krw, fee_krw, credit_micro)
       values ($1, $2, $3, $4, $5, $6) returning ${COLS}`,
      [p.orderId, p.userId, p.provider, p.amountKrw, p.feeKrw, p.creditMicro.toString()],
    );
    return row(rows[0]);
  }

  async byOrder(orderId: string): Promise<PaymentRow | null> {
    const rows = await this.db.query(`select ${COLS} from payments where order_id = $1`, [orderId]);
    return rows[0] ? row(rows[0]) : null;
  }

  /** gw_payment_paid: credits the order once (see the migration for the states). */
  async paid(orderId: string, paymentId: string, amountKrw: number): Promise<string> {
    const rows = await this.db.query<{ state: string }>("select state from gw_payment_paid($1, $2, $3)", [
      orderId,
      paymentId,
      amountKrw,
    ]);
    return rows[0]!.state;
  }

  async failed(orderId: string, status: "failed" | "canceled", code: string | null, message: string | null) {
    const rows = await this.db.query<{ f: boolean }>("select gw_payment_failed($1, $2, $3, $4) as f", [
      orderId,
      status,
      code,
      message,
    ]);
    return rows[0]!.f;
  }

  /** gw_payment_refunded: micro-won taken back now, or null when nothing changed. */
  async refunded(orderId: string, totalKrw: number): Promise<bigint | null> {
    const rows = await this.db.query<{ t: unknown }>("select gw_payment_refunded($1, $2) as t", [orderId, totalKrw]);
    const t = rows[0]?.t;
    return t == null ? null : BigInt(t as string);
  }

  /**
   * The account's money in and out, newest first: every top-up and refund ledger entry with the
   * balance right after it (a running sum over all the account's ledger entries, charges
   * included, so it is the ledger's own figure), and payments that moved nothing (failed,
   * canceled, pending).
   */
  async history(userId: string, limit: number): Promise<HistoryRow[]> {
    const rows = await this.db.query<any>(
      `with run as (
         select id, kind, amount_micro, meta, created_at,
                sum(amount_micro) over (order by id) as balance_micro
           from ledger_entries where user_id = $1
       )
       select * from (
         select r.created_at as at,
                case when r.kind = 'refund' then 'refund' when r.meta ? 'order_id' then 'topup' else 'operator_topup' end as type,
                r.meta->>'order_id' as order_id, r.meta->>'provider' as provider,
                (r.meta->>'paid_krw')::text as paid_krw, (r.meta->>'fee_krw')::text as fee_krw,
                r.amount_micro::text as amount_micro, r.balance_micro::text as balance_micro,
                null::text as failure_code, r.id as seq
           from run r where r.kind in ('topup', 'refund')
         union all
         select p.created_at, p.status, p.order_id, p.provider, p.amount_krw::text, p.fee_krw::text,
                null, null, p.failure_code, 0
           from payments p where p.user_id = $1 and p.status in ('pending', 'failed', 'canceled')
       ) h order by at desc, seq desc limit $2`,
      [userId, limit],
    );
    return rows.map((r) => ({
      at: new Date(r.at).toISOString(),
      type: r.type,
      orderId: r.order_id,
      provider: r.provider,
      paidKrw: r.paid_krw == null ? null : Number(r.paid_krw),
      feeKrw: r.fee_krw == null ? null : Number(r.fee_krw),
      amountMicro: r.amount_micro == null ? null : BigInt(r.amount_micro),
      balanceMicro: r.balance_micro == null ? null : BigInt(r.balance_micro),
      failureCode: r.failure_code,
    }));
  }

  async auto(userId: string): Promise<AutoTopupRow | null> {
    const rows = await this.db.query(`select ${AUTO_COLS} from auto_topups a where a.user_id = $1`, [userId]);
    return rows[0] ? autoRow(rows[0]) : null;
  }

  async autoByCustomer(customerKey: string): Promise<AutoTopupRow | null> {
    const rows = await this.db.query(`select ${AUTO_COLS} from auto_topups a where a.customer_key = $1`, [customerKey]);
    return rows[0] ? autoRow(rows[0]) : null;
  }

  async autoEnsure(userId: string, provider: string, customerKey: string): Promise<void> {
    await this.db.query(
      `insert into auto_topups (user_id, provider, customer_key) values ($1, $2, $3)
       on conflict (user_id) do update set provider = excluded.provider, customer_key = excluded.customer_key,
         billing_key = case when auto_topups.provider = excluded.provider then auto_topups.billing_key end,
         enabled = auto_topups.enabled and auto_topups.provider = excluded.provider`,
      [userId, provider, customerKey],
    );
  }

  async autoSetCard(userId: string, billingKey: string | null, label: string | null): Promise<void> {
    // Removing the card turns auto top-up off: nothing is left to charge.
    await this.db.query(
      `update auto_topups set billing_key = $2, card_label = $3, last_error = null, updated_at = now(),
         enabled = enabled and $2::text is not null where user_id = $1`,
      [userId, billingKey, label],
    );
  }

  async autoConfigure(userId: string, enabled: boolean, thresholdKrw: number, amountKrw: number): Promise<void> {
    await this.db.query(
      `update auto_topups set enabled = $2, threshold_krw = $3, amount_krw = $4, last_error = null,
         last_attempt_at = null, updated_at = now() where user_id = $1`,
      [userId, enabled, thresholdKrw, amountKrw],
    );
  }

  async autoFailed(userId: string, error: string): Promise<void> {
    await this.db.query(
      "update auto_topups set enabled = false, last_error = $2, updated_at = now() where user_id = $1",
      [userId, error.slice(0, 500)],
    );
  }

  async autoClaimDue(retrySeconds: number, limit: number): Promise<DueAutoTopup[]> {
    const rows = await this.db.query<any>(
      `update auto_topups a set last_attempt_at = now()
         from (select a2.user_id, u.email from auto_topups a2 join users u on u.id = a2.user_id
                where a2.enabled and a2.billing_key is not null and u.deleted_at is null
                  and u.balance_micro - u.held_micro < a2.threshold_krw * 1000000
                  and (a2.last_attempt_at is null or a2.last_attempt_at < now() - make_interval(secs => $1))
                limit $2 for update of a2 skip locked) due
        where a.user_id = due.user_id
          and (a.last_attempt_at is null or a.last_attempt_at < now() - make_interval(secs => $1))
       returning ${AUTO_COLS}, due.email`,
      [retrySeconds, limit],
    );
    return rows.map((r) => ({ ...autoRow(r), email: r.email }));
  }
}
