/** The Ledger port over the gw_* SQL functions (drizzle/0001_ledger_functions.sql). */
import type { Database } from "../client";
import type { HoldOutcome, HoldRequest, Ledger, UsageEvent } from "../../core/billing/ledger";

function eventJson(e: UsageEvent | null): string | null {
  if (!e) return null;
  return JSON.stringify({
    model: e.model,
    provider: e.provider,
    maker: e.maker,
    modality: e.modality,
    app: e.app,
    status: e.status,
    prompt_tokens: e.promptTokens,
    completion_tokens: e.completionTokens,
    cached_tokens: e.cachedTokens,
    cache_write_tokens: e.cacheWriteTokens,
    fx_milli: e.fxMilli === null ? null : e.fxMilli.toString(),
    latency_ms: e.latencyMs,
    cached: e.cached,
  });
}

const monthOf = (d = new Date()) => d.toISOString().slice(0, 7);

export class SqlLedger implements Ledger {
  constructor(
    private db: Database,
    private onOpenChange: (delta: number) => void = () => {},
  ) {}

  async hold(h: HoldRequest): Promise<HoldOutcome> {
    const rows = await this.db.query<{ r: HoldOutcome }>("select gw_hold($1, $2, $3, $4, $5, $6, $7) as r", [
      h.id,
      h.userId,
      h.keyId,
      monthOf(),
      h.amountMicro.toString(),
      h.tokens,
      h.ttlSeconds,
    ]);
    const r = rows[0]!.r;
    if (r === "ok") this.onOpenChange(1);
    return r;
  }

  async settle(id: string, costMicro: bigint, tokens: number, event: UsageEvent | null): Promise<boolean> {
    const rows = await this.db.query<{ r: string }>("select gw_settle($1, $2, $3, $4::jsonb) as r", [id, costMicro.toString(), tokens, eventJson(event)]);
    const ok = rows[0]!.r === "ok";
    if (ok) this.onOpenChange(-1);
    return ok;
  }

  async release(id: string, event: UsageEvent | null): Promise<boolean> {
    const rows = await this.db.query<{ r: string }>("select gw_release($1, $2::jsonb) as r", [id, eventJson(event)]);
    const ok = rows[0]!.r === "ok";
    if (ok) this.onOpenChange(-1);
    return ok;
  }

  async record(id: string, userId: string, keyId: string | null, event: UsageEvent): Promise<void> {
    await this.db.query("select gw_insert_usage($1, $2, $3, 0, $4::jsonb)", [id, userId, keyId, eventJson(event)]);
  }

  async sweepExpired(limit = 500): Promise<number> {
    const rows = await this.db.query<{ id: string }>("select id from holds where status = 'open' and expires_at < now() order by expires_at limit $1", [limit]);
    let n = 0;
    for (const r of rows) if (await this.release(r.id, null)) n++;
    return n;
  }
}
