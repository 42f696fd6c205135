/** What the billing service needs from storage (src/db/repos/payments.ts implements it over SQL). */

export interface PaymentRow {
  orderId: string;
  userId: string;
  provider: string;
  providerPaymentId: string | null;
  amountKrw: number;
  feeKrw: number;
  creditMicro: bigint;
  status: string;
  refundedKrw: number;
  failureCode: string | null;
  failureMessage: string | null;
  createdAt: string;
  paidAt: string | null;
}

export interface HistoryRow {
  at: string;
  /** `topup` (a payment credited), `operator_topup`, `refund`, `failed`, `canceled`, `pending`. */
  type: string;
  orderId: string | null;
  provider: string | null;
  paidKrw: number | null;
  feeKrw: number | null;
  /** Micro-won moved in the ledger (negative for a refund); null when nothing moved. */
  amountMicro: bigint | null;
  /** The balance right after this entry, micro-won; null when nothing moved. */
  balanceMicro: bigint | null;
  failureCode: string | null;
}

export interface AutoTopupRow {
  userId: string;
  provider: string;
  customerKey: string;
  billingKey: string | null;
  cardLabel: string | null;
  enabled: boolean;
  thresholdKrw: number;
  amountKrw: number;
  lastError: string | null;
}

/** A due auto top-up, claimed by this instance, with the account's email. */
export interface DueAutoTopup extends AutoTopupRow {
  email: string;
}

export interface PaymentStore {
  create(p: {
    orderId: string;
    userId: string;
    provider: string;
    amountKrw: number;
    feeKrw: number;
    creditMicro: bigint;
  }): Promise<PaymentRow>;
  byOrder(orderId: string): Promise<PaymentRow | null>;
  /** Credits the order once: `credited`, `already`, `unknown`, `amount_mismatch` or `payment_reused`. */
  paid(orderId: string, paymentId: string, amountKrw: number): Promise<string>;
  /** Records a payment that did not go through, on an unpaid order; whether it changed. */
  failed(orderId: string, status: "failed" | "canceled", code: string | null, message: string | null): Promise<boolean>;
  /** Records the provider's refunded total; micro-won taken back now, or null when nothing changed. */
  refunded(orderId: string, totalKrw: number): Promise<bigint | null>;
  history(userId: string, limit: number): Promise<HistoryRow[]>;
  auto(userId: string): Promise<AutoTopupRow | null>;
  autoByCustomer(customerKey: string): Promise<AutoTopupRow | null>;
  /** Creates the account's row (off) with its provider and customer id, or keeps the existing one. */
  autoEnsure(userId: string, provider: string, customerKey: string): Promise<void>;
  autoSetCard(userId: string, billingKey: string | null, label: string | null): Promise<void>;
  autoConfigure(userId: string, enabled: boolean, thresholdKrw: number, amountKrw: number): Promise<void>;
  /** Turns auto top-up off after a failed charge, saying why. */
  autoFailed(userId: string, error: string): Promise<void>;
  /**
   * Claims the accounts whose free credit is under their threshold and that no instance tried
   * within `retrySeconds` (the claim is the attempt's time, set in the same statement).
   */
  autoClaimDue(retrySeconds: number, limit: number): Promise<DueAutoTopup[]>;
}
