/**
 * The ledger port: the three atomic money steps and the usage record. One ledger per process,
 * composed of layers over the database's statements (compose.ts); docs/ledger.md tells the
 * invariants, the layers and the life of a hold.
 */
import { GatewayError, text } from "../errors";

export interface UsageEvent {
  model: string;
  provider: string | null;
  maker: string | null;
  modality: "text" | "video" | "embedding";
  app: string | null;
  status: number;
  promptTokens: number;
  completionTokens: number;
  cachedTokens: number;
  cacheWriteTokens: number;
  fxMilli: bigint | null;
  latencyMs: number | null;
  cached: boolean;
  /** The API that carried the call; absent, derived from the modality (text: chat). */
  api?: "chat" | "responses" | "messages" | "embeddings" | "video";
  streamed?: boolean;
  ttftMs?: number | null;
  errorCode?: string | null;
  /** A routing-policy call's X-Policy-Decision. */
  policyDecision?: string | null;
}

export interface HoldRequest {
  /** The request id; a second hold with the same id is refused ('duplicate'). */
  id: string;
  userId: string;
  keyId: string | null;
  amountMicro: bigint;
  /** Tokens reserved against the key's monthly token limit. */
  tokens: number;
  ttlSeconds: number;
  /**
   * May be held against a credit lease of its key (leasing.ts): an ordinary chat call whose
   * settle carries its usage event. Other holds always go to the database alone.
   */
  leasable?: boolean;
  /** Closed by another component's statements (a video job's store): outside the open-holds gauge. */
  closedElsewhere?: boolean;
}

export type HoldOutcome =
  | "ok"
  | "insufficient_credits"
  | "monthly_budget_exceeded"
  | "monthly_token_quota_exceeded"
  | "org_member_monthly_budget_exceeded"
  | "unauthorized"
  | "duplicate";

/** Refusals for want of room: credits, the key's budget or tokens, an org member's budget. */
export const ROOM_REFUSALS: ReadonlySet<string> = new Set<HoldOutcome>([
  "insufficient_credits",
  "monthly_budget_exceeded",
  "monthly_token_quota_exceeded",
  "org_member_monthly_budget_exceeded",
]);

/** The billing month of holds and key counters, in UTC: `YYYY-MM`. */
export function currentMonth(now?: Date): string {
  if (now) return now.toISOString().slice(0, 7);
  // The clock's month, formatted once per month rather than on every call that asks.
  const t = Date.now();
  if (t >= monthCache.from && t < monthCache.until) return monthCache.month;
  const d = new Date(t);
  monthCache.month = d.toISOString().slice(0, 7);
  monthCache.from = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
  monthCache.until = Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
  return monthCache.month;
}

const monthCache = { month: "", from: 0, until: 0 };

/** How a hold began (`Ledger.begin`). */
export type HoldStart = "placed" | "alongside" | "await";

export interface Ledger {
  hold(h: HoldRequest): Promise<HoldOutcome>;
  /**
   * Begins the hold, in one step: `placed`, it is placed at once in memory (a credit lease's
   * room), as if `hold(h)` had answered "ok"; `alongside` (asked only with `overlap`), the
   * ledger's last answers for the key leave room for `h` beyond every hold in flight, so it is
   * counted in flight and the upstream call may start while `hold(h)` is on its way
   * (hold-estimate.ts); `await`, the caller sends `hold(h)` and waits for it. After either of
   * the last two the caller must send `hold(h)`, which counts nothing twice.
   */
  begin?(h: HoldRequest, overlap: boolean): HoldStart;
  /**
   * Charges `costMicro`, at most the hold's amount (the ledger caps it: no balance goes below
   * zero), and closes the hold; false when it was already closed (never twice).
   */
  settle(id: string, costMicro: bigint, tokens: number, event: UsageEvent | null): Promise<boolean>;
  /** Gives the hold back in full; false when it was already closed. */
  release(id: string, event: UsageEvent | null): Promise<boolean>;
  /** A usage record without money (response-cache hits). */
  record(id: string, userId: string, keyId: string | null, event: UsageEvent): Promise<void>;
  /** Releases open holds past their expiry (requests that died); returns how many. */
  sweepExpired(limit?: number): Promise<number>;
  /**
   * Moves the expiry of these calls' holds (or of the leases they are held against) to
   * `ttlSeconds` from now, never earlier: calls still running keep their holds (hold-keeper.ts).
   */
  renew?(ids: readonly string[], ttlSeconds: number): Promise<void>;
}

/** What a video job needs of the ledger: its hold is closed by the job store's own statements. */
export type JobLedger = Pick<Ledger, "hold" | "release">;

/** Places a hold or throws the specification's 402 (or 401, or 409 for a reused id) for the outcome. */
export async function holdOrThrow(ledger: Pick<Ledger, "hold">, h: HoldRequest): Promise<void> {
  const r = await ledger.hold(h);
  switch (r) {
    case "ok":
      return;
    case "insufficient_credits":
      throw new GatewayError("insufficient_credits", undefined, { action: { type: "topup", path: "/billing" } });
    case "monthly_budget_exceeded":
    case "monthly_token_quota_exceeded":
    case "org_member_monthly_budget_exceeded":
      throw new GatewayError(r);
    case "unauthorized":
      throw new GatewayError(
        "unauthorized",
        text("삭제되었거나 존재하지 않는 계정입니다.", "The account was deleted or does not exist."),
      );
    case "duplicate":
      throw new GatewayError("request_id_reused");
  }
}
