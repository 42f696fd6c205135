/**
 * This instance's view of upstream health: one circuit per provider and one per provider ×
 * model (breaker.ts), fed by every upstream attempt of the chat core's loop. A call is let
 * through only when both circuits of its candidate let it through; its outcome goes into both.
 * A provider that fails across models opens its provider circuit (its other models are skipped
 * too); a single model failing at a provider opens only its own.
 *
 * Transitions are reported to listeners (metrics, the Redis board that tells other instances).
 */
import {
  admit,
  CLOSED,
  openUntil,
  record,
  settle,
  type BreakerSettings,
  type Circuit,
  type CircuitState,
} from "./breaker";

export interface HealthSettings extends BreakerSettings {
  /** A successful call slower than this (to its first byte) counts as failed; 0 = never. */
  slowMs: number;
}

/** `model` is `*` for the provider-wide circuit. */
export interface Transition {
  provider: string;
  model: string;
  to: CircuitState;
  /** Open: when the cool-down ends (epoch ms). */
  until: number;
  /** Learned from another instance, not from this one's calls. */
  remote: boolean;
}

export type AttemptVerdict = "ok" | "failed" | "neutral";

/** A call let through: report how it went, exactly once. */
export interface HealthTicket {
  end(verdict: AttemptVerdict, ms?: number): void;
}

export type Admission = { allowed: true; ticket: HealthTicket } | { allowed: false; retryAfterMs: number };

/** What the attempt loop sees of the tracker; `account` is the calling account (breaker.ts, "Accounts"). */
export interface HealthGate {
  admit(provider: string, model: string, account?: string): Admission;
}

export const ANY_MODEL = "*";

export class HealthTracker implements HealthGate {
  private circuits = new Map<string, Circuit>();
  private listeners: ((t: Transition) => void)[] = [];
  private transitions = 0;

  constructor(
    private settings: HealthSettings,
    private now: () => number = Date.now,
  ) {}

  /**
   * Changes with every transition, so views built from the states can be cached per version.
   * Reading it first turns the open circuits past their cool-down half-open (with their transition).
   */
  get version(): number {
    const now = this.now();
    for (const [k, c] of this.circuits) if (c.state === "open" && now >= c.until) this.put(k, settle(c, now), false);
    return this.transitions;
  }

  onTransition(f: (t: Transition) => void): void {
    this.listeners.push(f);
  }

  admit(provider: string, model: string, account = ""): Admission {
    const now = this.now();
    // The provider's circuit and the model's: both must let the call through.
    const kAny = key(provider, ANY_MODEL);
    const kModel = key(provider, model);
    const onAny = admit(this.get(kAny), now, this.settings);
    const onModel = admit(this.get(kModel), now, this.settings);
    if (!onAny.allowed || !onModel.allowed) {
      // No probe slot is taken when the other circuit refuses.
      this.put(kAny, settle(this.get(kAny), now), false);
      this.put(kModel, settle(this.get(kModel), now), false);
      // Open: until its cool-down ends; half-open with every probe out: a second, about a probe's time.
      const until = Math.max(openUntilOf(onAny), openUntilOf(onModel));
      return { allowed: false, retryAfterMs: Math.max(until - now, 1000) };
    }
    this.put(kAny, onAny.circuit, false);
    this.put(kModel, onModel.circuit, false);
    return { allowed: true, ticket: new Ticket(this, kAny, kModel, onAny.probe, onModel.probe, account) };
  }

  /** An admitted call's outcome, on both of its circuits (Ticket.end). */
  ended(t: Ticket, verdict: AttemptVerdict, ms?: number): void {
    const slow = verdict === "ok" && this.settings.slowMs > 0 && ms !== undefined && ms > this.settings.slowMs;
    const v = slow ? "failed" : verdict;
    const at = this.now();
    this.put(t.kAny, record(this.get(t.kAny), at, this.settings, v, t.probeAny, t.account), false);
    this.put(t.kModel, record(this.get(t.kModel), at, this.settings, v, t.probeModel, t.account), false);
  }

  /** Another instance opened this circuit until `until`. */
  learned(provider: string, model: string, until: number): void {
    const k = key(provider, model);
    const now = this.now();
    this.put(k, openUntil(this.get(k), until, now), true);
  }

  /** The circuit's state now (closed when never seen). */
  state(provider: string, model: string = ANY_MODEL): CircuitState {
    return settle(this.get(key(provider, model)), this.now()).state;
  }

  /** Every circuit this instance knows, for the metrics. */
  states(): { provider: string; model: string; state: CircuitState }[] {
    void this.version;
    const now = this.now();
    return [...this.circuits].map(([k, c]) => {
      const [provider, model] = split(k);
      return { provider, model, state: settle(c, now).state };
    });
  }

  private get(k: string): Circuit {
    return this.circuits.get(k) ?? CLOSED;
  }

  private put(k: string, next: Circuit, remote: boolean): void {
    // The stored state, not the settled one: an open circuit found past its cool-down reports its half-open turn.
    const before = this.get(k).state;
    this.circuits.set(k, next);
    if (next.state === before) return;
    this.transitions++;
    const [provider, model] = split(k);
    for (const f of this.listeners) f({ provider, model, to: next.state, until: next.until, remote });
  }
}

/** A call let through on both circuits; its first `end` counts, later ones are ignored. */
class Ticket implements HealthTicket {
  private done = false;
  constructor(
    private readonly tracker: HealthTracker,
    readonly kAny: string,
    readonly kModel: string,
    readonly probeAny: boolean,
    readonly probeModel: boolean,
    readonly account: string,
  ) {}
  end(verdict: AttemptVerdict, ms?: number): void {
    if (this.done) return;
    this.done = true;
    this.tracker.ended(this, verdict, ms);
  }
}

/** When a refusing circuit may let calls through again (0: it is not an open one). */
const openUntilOf = (d: ReturnType<typeof admit>) => (d.allowed || d.circuit.state !== "open" ? 0 : d.circuit.until);

const key = (provider: string, model: string) => `${provider}\u0000${model}`;
const split = (k: string) => k.split("\u0000") as [string, string];
