/**
 * The leasing layer: a busy key's calls are held in memory against one database hold (a credit
 * lease), their charges batched behind it. The policy — when, how much, until when — is the
 * pure state machine of lease-policy.ts; this layer sends the statements it asks for and
 * reports their answers back. Invariants, gain and the life of a lease: docs/ledger.md.
 */
import { swallowed } from "../../lib/log";
import type { HoldEstimates } from "./hold-estimate";
import { currentMonth, ROOM_REFUSALS, type HoldRequest, type HoldStart, type UsageEvent } from "./ledger";
import { LEASE_RULES, LeasePolicy, type CarveContext, type LeaseEffect, type LeaseRules } from "./lease-policy";
import type { HoldAnswer, LeaseCharge, LeaseStore, SettleAnswer } from "./ledger-store";
import { StepBatcher, type Pending } from "./step-batcher";
import type { LedgerHooks, LedgerLayer } from "./store-ledger";

/** Charges in one statement at most. */
const MAX_CHARGES = 512;
/** Charge statements in flight at once (docs/decisions.md #55). */
const CHARGE_SLOTS = 1;

const NOTHING_SENT: Promise<unknown> = Promise.resolve();

/** A hold placed against a lease: shared, as nothing reads more than its outcome. */
const HELD_NOW = Promise.resolve<HoldAnswer>({ outcome: "ok", freeMicro: null, freeTokens: null });

export interface LeasingDeps {
  store: LeaseStore;
  /** The room estimates the overlap layer keeps: a lease takes a quarter of the key's room. */
  estimates: HoldEstimates;
  hooks: LedgerHooks;
  /** Whether an error means the database is out of reach (a batch then fails as a whole). */
  unavailable(e: unknown): boolean;
  rules?: LeaseRules;
  /**
   * Asks every instance to retire its leases of the account (the invalidation bus): a hold
   * refused for want of room that other instances' leases hold is tried again once they give it back.
   */
  retireElsewhere?(userId: string): Promise<void>;
}

/** How long a refused hold waits for other instances to give leased room back, and how often it looks. */
const ELSEWHERE_WAIT_MS = 300;
const ELSEWHERE_POLL_MS = 20;

export class LeasingLedger implements LedgerLayer {
  private policy: LeasePolicy;
  private charges: StepBatcher<never, never, LeaseCharge, SettleAnswer>;
  /**
   * Holds `begin` tried to carve and handed to the inner layers: their `hold` goes there. A
   * carve counts the call in the key's busy window, so it is never tried twice for one hold.
   */
  private toInner = new Set<string>();
  /** Leases whose close is on its way. */
  private closing = new Map<string, Promise<void>>();
  private timer: ReturnType<typeof setInterval>;
  private rules: LeaseRules;
  private carving: CarveContext = {
    now: 0,
    month: () => currentMonth(),
    room: (req) => this.deps.estimates.roomFor(req),
    newId: () => crypto.randomUUID(),
  };

  constructor(
    private inner: LedgerLayer,
    private deps: LeasingDeps,
  ) {
    this.rules = deps.rules ?? LEASE_RULES;
    this.policy = new LeasePolicy(this.rules);
    // The first charge of an idle moment goes at once; later ones group behind the statement in
    // flight. A charge of an open lease only appends rows (drizzle/0026) and locks no account
    // row, so more statements could run at once; measured, four in flight doubled PostgreSQL's
    // CPU per call (smaller batches) with no gain in throughput or wait (docs/decisions.md #55).
    this.charges = new StepBatcher(CHARGE_SLOTS, MAX_CHARGES, {
      step: async (items) => ({ settles: await deps.store.charge(items), holds: [] }),
      settle: async (item) => (await deps.store.charge([item]))[0]!,
      hold: () => Promise.reject(new Error("leases batch charges only")),
      failsAll: (e) => deps.unavailable(e),
    });
    this.timer = setInterval(() => void this.apply(this.policy.idle(performance.now())), this.rules.idleMs / 2);
    this.timer.unref?.();
  }

  begin(h: HoldRequest, overlap: boolean): HoldStart {
    if (this.carve(h)) return "placed";
    this.toInner.add(h.id);
    return this.inner.begin(h, overlap);
  }

  hold(h: HoldRequest): Promise<HoldAnswer> {
    // Held in memory, the usual case of a busy key: one shared settled promise, no async call.
    if (this.policy.has(h.id)) return HELD_NOW;
    if (!this.toInner.delete(h.id) && this.carve(h)) return HELD_NOW;
    return this.holdInner(h);
  }

  private async holdInner(h: HoldRequest): Promise<HoldAnswer> {
    const answer = await this.inner.hold(h);
    if (!ROOM_REFUSALS.has(answer.outcome)) return answer;
    // Room leased for the account, by this instance or another, is given back before a refusal for want of room stands.
    if (this.policy.holdsFor(h.userId)) {
      await this.retireAll({ userId: h.userId });
      return this.inner.hold(h);
    }
    if (this.deps.retireElsewhere && (await this.retiredElsewhere(h.userId))) return this.inner.hold(h);
    return answer;
  }

  /** Whether other instances held leases of the account and gave some of it back (waits a little for it). */
  private async retiredElsewhere(userId: string): Promise<boolean> {
    const leased = await this.deps.store.leasedMicro(userId);
    if (leased === 0n) return false;
    await this.deps.retireElsewhere!(userId);
    for (let waited = 0; waited < ELSEWHERE_WAIT_MS; waited += ELSEWHERE_POLL_MS) {
      await new Promise((resolve) => setTimeout(resolve, ELSEWHERE_POLL_MS));
      if ((await this.deps.store.leasedMicro(userId)) < leased) return true;
    }
    return true;
  }

  settle(id: string, costMicro: bigint, tokens: number, event: UsageEvent | null): Promise<boolean> {
    if (!this.policy.has(id)) return this.inner.settle(id, costMicro, tokens, event);
    const { lease, holdMicro } = this.policy.chargeAsked(id, costMicro, tokens);
    // A failed statement rejects and the caller retries; the accounting above stays.
    const charge = new Charge(this, lease.id, id, costMicro, holdMicro, tokens, event);
    this.charges.settleVia(charge);
    return charge.closed;
  }

  /** A lease charge's statement answered (Charge): its capped report and the policy's effects. */
  landed(c: LeaseCharge, answer: SettleAnswer): void {
    if (answer === "capped") this.deps.hooks.onCapped(c.id, c.costMicro);
    void this.apply(this.policy.chargeLanded(c.id));
  }

  async release(id: string, event: UsageEvent | null): Promise<boolean> {
    if (!this.policy.has(id)) return this.inner.release(id, event);
    const { userId, keyId, effects } = this.policy.release(id);
    void this.apply(effects);
    if (event) await this.inner.record(id, userId, keyId, event);
    return true;
  }

  record(id: string, userId: string, keyId: string | null, event: UsageEvent): Promise<void> {
    return this.inner.record(id, userId, keyId, event);
  }

  renew(ids: readonly string[], ttlSeconds: number): Promise<void> {
    // A call held against a lease keeps its lease alive (the sweeper closes leases, not calls).
    return this.inner.renew([...new Set(ids.map((id) => this.policy.leaseOf(id) ?? id))], ttlSeconds);
  }

  sweepExpired(limit: number): Promise<number> {
    return this.inner.sweepExpired(limit);
  }

  /**
   * Retires the leases of an account (or of one key, or all): resolves once what their calls in
   * flight cannot spend is given back (and, for a lease without calls in flight, once it is closed).
   */
  async retireAll(match: { userId?: string; keyId?: string } = {}): Promise<void> {
    await this.apply(this.policy.retireAll(match).effects);
  }

  /** Whether call `id` is held against a lease. */
  has(id: string): boolean {
    return this.policy.has(id);
  }

  /** The lease call `id` is held against; undefined when none. */
  leaseOf(id: string): string | undefined {
    return this.policy.leaseOf(id);
  }

  /** Whether this process holds an active lease of the account. */
  holdsFor(userId: string): boolean {
    return this.policy.holdsFor(userId);
  }

  /** Leases open, and the credit room (micro-KRW) still available in them. */
  totals(): { open: number; availableMicro: bigint } {
    return this.policy.totals();
  }

  /** Stops the idle timer; retires every lease (closing those without calls in flight). */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.retireAll();
  }

  private carve(h: HoldRequest): boolean {
    // One context for every carve (the policy keeps none of it): only the time changes.
    this.carving.now = performance.now();
    const { held, effects } = this.policy.carve(h, this.carving);
    if (effects.length) void this.apply(effects);
    return held;
  }

  /** Sends the statements the policy asked for; resolves when they are answered. */
  private apply(effects: readonly LeaseEffect[]): Promise<unknown> {
    if (!effects.length) return NOTHING_SENT;
    return Promise.all(effects.map((effect) => this.send(effect)));
  }

  private send(effect: LeaseEffect): Promise<void> {
    const { store, estimates, hooks } = this.deps;
    switch (effect.kind) {
      case "open": {
        const request = effect.request;
        estimates.sent(request);
        let answer: HoldAnswer | null = null;
        return (
          store
            .open({ ...request, month: effect.month })
            .then((a) => {
              answer = a;
              if (a.outcome === "ok") hooks.onOpenChange(1);
            })
            // No lease: the calls go to the database one by one.
            .catch(swallowed("credit lease open", { key_id: request.keyId }))
            .finally(() => {
              estimates.answered(
                request,
                answer?.outcome ?? null,
                answer && { micro: answer.freeMicro, tokens: answer.freeTokens },
              );
              void this.apply(this.policy.opened(effect, answer?.outcome ?? null, performance.now()).effects);
            })
        );
      }
      case "trim":
        // Keep what the calls in flight may still spend and what is being charged; give back the rest.
        return store
          .trim(effect.lease.id, { micro: effect.keepMicro, tokens: effect.keepTokens }, { close: false })
          .then(() => {}, swallowed("credit lease trim", { lease_id: effect.lease.id }));
      case "close": {
        // A failed close leaves the lease to the sweeper at its expiry (gw_lease_trim closes it then).
        const id = effect.lease.id;
        const closing =
          this.closing.get(id) ??
          store
            .trim(id, { micro: 0n, tokens: 0 }, { close: true })
            .then(() => hooks.onOpenChange(-1), swallowed("credit lease close", { lease_id: id }));
        this.closing.set(id, closing);
        return closing.finally(() => this.closing.delete(id));
      }
    }
  }
}

/**
 * A lease charge on its way: the batcher's item, and the one that answers it. The settle of a
 * leased call, the usual case under load, makes this object and one promise, where an async
 * layer, the batcher's promise and their closures were (docs/decisions.md #64).
 */
class Charge implements LeaseCharge, Pending<LeaseCharge, SettleAnswer> {
  readonly item: LeaseCharge = this;
  /** Whether the charge closed the call's hold now (false: it was closed before). */
  readonly closed: Promise<boolean>;
  private answer: (closed: boolean) => void;
  readonly reject: (e: unknown) => void;

  constructor(
    private ledger: LeasingLedger,
    readonly lease: string,
    readonly id: string,
    readonly costMicro: bigint,
    readonly holdMicro: bigint,
    readonly tokens: number,
    readonly event: UsageEvent | null,
  ) {
    const { promise, resolve, reject } = Promise.withResolvers<boolean>();
    this.closed = promise;
    this.answer = resolve;
    this.reject = reject;
  }

  /** Never throws: the batcher resolves a whole batch in one loop, and every charge must hear its answer. */
  resolve(answer: SettleAnswer): void {
    try {
      this.ledger.landed(this, answer);
    } catch (e) {
      swallowed("lease charge bookkeeping", { request_id: this.id })(e);
    }
    this.answer(answer !== "not_open");
  }
}
