/**
 * The overlap layer: begins a hold `alongside` when the ledger's last answers leave the key room
 * for a hold beyond every hold in flight (hold-estimate.ts), so the chat call starts upstream
 * while its hold is on its way. The hold stays the only authority: a refused hold aborts the
 * call before anything reaches the client. Gain and tests: docs/ledger.md ("Overlap").
 */
import type { HoldEstimates } from "./hold-estimate";
import type { HoldRequest, HoldStart, UsageEvent } from "./ledger";
import type { HoldAnswer } from "./ledger-store";
import type { LedgerLayer } from "./store-ledger";

export class OverlapLedger implements LedgerLayer {
  /** Holds begun alongside their call, already counted in flight. */
  private reserved = new Set<string>();

  constructor(
    private inner: LedgerLayer,
    private estimates: HoldEstimates,
  ) {}

  begin(h: HoldRequest, overlap: boolean): HoldStart {
    if (!overlap || !this.estimates.allows(h)) return "await";
    this.estimates.sent(h);
    this.reserved.add(h.id);
    return "alongside";
  }

  async hold(h: HoldRequest): Promise<HoldAnswer> {
    if (!this.reserved.delete(h.id)) this.estimates.sent(h);
    let answer: HoldAnswer | null = null;
    try {
      answer = await this.inner.hold(h);
    } finally {
      this.estimates.answered(
        h,
        answer?.outcome ?? null,
        answer && { micro: answer.freeMicro, tokens: answer.freeTokens },
      );
    }
    return answer;
  }

  settle(id: string, costMicro: bigint, tokens: number, event: UsageEvent | null): Promise<boolean> {
    return this.inner.settle(id, costMicro, tokens, event);
  }

  release(id: string, event: UsageEvent | null): Promise<boolean> {
    return this.inner.release(id, event);
  }

  record(id: string, userId: string, keyId: string | null, event: UsageEvent): Promise<void> {
    return this.inner.record(id, userId, keyId, event);
  }

  renew(ids: readonly string[], ttlSeconds: number): Promise<void> {
    return this.inner.renew(ids, ttlSeconds);
  }

  sweepExpired(limit: number): Promise<number> {
    return this.inner.sweepExpired(limit);
  }
}
