/**
 * Payments (drizzle/0023): orders, their state changes through the migration's functions (each
 * one transaction with its ledger entry), and the account's billing history with its running
 * balance, read from the ledger itself.
 */
import type { Database } from "../client";
import type { HistoryRow, PaymentRow, PaymentStore } from "../../core/payments/store";

export type { HistoryRow, PaymentRow };

const COLS = `order_id, user_id, provider, provider_payment_id, amount_krw::text,
  fee_krw::text, credit_micro::text, status, refunded_krw::text, failure_code, failure_message,
  created_at, paid_at`;

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
}
