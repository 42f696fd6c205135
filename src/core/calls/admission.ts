/**
 * Admission of model calls on this instance (chat, Responses, video submissions): limits on
 * the calls in flight per API key and per account, and one budget of calls in flight per
 * process (the upstream connection budget) shared fairly between accounts.
 *
 * Without them, one account holding a few hundred slow streams took every upstream request
 * slot of the process (Bun's fetch runs 256 at once and silently queues the rest) and every
 * other tenant's calls waited behind its streams.
 *
 * Fairness: the budget's last quarter is kept for accounts below their share. Once no more
 * than a quarter is free, an account already holding budget / (active accounts + 1) calls is
 * refused, so a tenant arriving then still finds room. When the budget is full, a call of an
 * account under its share (budget / active accounts) waits for the next free slot (the
 * account with the fewest calls first, then the longest waiting) for at most queueTimeoutMs,
 * then 503; an account at or over its share is refused at once. Refusals are 429
 * `concurrency_limit_exceeded` with Retry-After, before anything is held or sent upstream.
 *
 * Pre-emption (issue 28.3): waiting alone let accounts that filled the budget with calls to a
 * hung upstream make every newcomer wait for the hang's deadline. So with the budget full, a
 * call of an account under its share takes the newest slot of the account holding the most
 * calls, when that account holds more than its share: the pre-empted call's `preempted` signal
 * aborts (its upstream request is cut, its client answered 429 or its stream ended) and the
 * newcomer runs at once. However many accounts attack, one under its share never waits for them.
 *
 * The counts are this instance's, also when REDIS_URL is set: the budget they protect is a
 * process's own, and a count shared in Redis would outlive a crashed instance's calls. With
 * N instances an account may have N × its limit in flight in all.
 */
import { GatewayError, text, type Text } from "../errors";

export interface AdmissionLimits {
  /** Calls in flight per process (0: no budget, Bun's own queue decides). */
  budget: number;
  /** Calls in flight per account (0 = off). */
  perAccount: number;
  /** Calls in flight per API key (0 = off). */
  perKey: number;
  /** How long a call under its account's share waits for a slot of a full budget (0: 503 at once). */
  queueTimeoutMs: number;
}

export interface Caller {
  userId: string;
  keyId: string;
}

/** An admitted call's place. release() is idempotent. */
export interface CallSlot {
  release(): void;
  /** Aborts (with the 429 of FAIR_SHARE) when a tenant under its share took this slot. */
  readonly preempted: AbortSignal;
  /** Why the slot was taken away (pre-empted, or the process stopping); undefined while it is held. */
  readonly preemption: unknown;
  /** Aborts `ctl` with the pre-emption's reason when it comes (at once if it came): no signal of its own made. */
  forward(ctl: AbortController): void;
}

/**
 * A running call: its account's newest are pre-empted first. Its pre-emption is remembered and
 * forwarded to the caller's controller; a signal of its own is made only when asked for (most
 * callers forward, and most calls are never pre-empted).
 */
class Running implements CallSlot {
  gone = false;
  preemption: unknown = undefined;
  private ctl?: AbortController;
  private forwardTo?: AbortController;

  constructor(
    readonly who: Caller,
    private readonly admission: CallAdmission,
  ) {}

  get preempted(): AbortSignal {
    if (!this.ctl) {
      this.ctl = new AbortController();
      if (this.preemption !== undefined) this.ctl.abort(this.preemption);
    }
    return this.ctl.signal;
  }

  forward(ctl: AbortController): void {
    if (this.preemption !== undefined) ctl.abort(this.preemption);
    else this.forwardTo = ctl;
  }

  preempt(reason: unknown): void {
    if (this.preemption !== undefined) return;
    this.preemption = reason;
    this.ctl?.abort(reason);
    this.forwardTo?.abort(reason);
  }

  release(): void {
    if (this.gone) return;
    this.admission.released(this);
  }
}

interface Waiter {
  who: Caller;
  grant(): void;
  fail(e: unknown): void;
}

// A refused caller may retry as soon as one of its calls ends; the spec asks clients for at least 1 s.
const RETRY_AFTER_S = 1;

const refused = (message: Text) =>
  new GatewayError("concurrency_limit_exceeded", message, { retryAfter: RETRY_AFTER_S });
const FAIR_SHARE = text(
  "서버가 혼잡하여 계정마다 공정한 몫의 동시 요청만 처리합니다. 진행 중인 요청이 끝난 뒤 다시 시도하세요.",
  "The server is busy and serves each account only its fair share of concurrent requests. Try again when one finishes.",
);

export class CallAdmission {
  private inFlight = 0;
  /** Calls admitted or waiting, per account and per key. */
  private accounts = new Map<string, number>();
  private keys = new Map<string, number>();
  /** Arrival order. */
  private queue: Waiter[] = [];
  /** Running calls per account, oldest first. */
  private live = new Map<string, Running[]>();
  /** Calls pre-empted so far (a gauge's source). */
  preemptions = 0;
  /** Set once the process stops (stopAll): every later call is refused with it. */
  private stopped: GatewayError | null = null;

  constructor(private limits: AdmissionLimits) {}

  /** Calls in flight on this instance. */
  get running(): number {
    return this.inFlight;
  }

  /** Half the budget or more in use, or calls waiting: who may take a slot starts to matter. */
  get contended(): boolean {
    return this.limits.budget > 0 && (this.inFlight * 2 >= this.limits.budget || this.queue.length > 0);
  }

  /** Calls waiting for a slot of the full budget. */
  get waiting(): number {
    return this.queue.length;
  }

  /** A slot for one call of `who`, or a GatewayError (429, or 503 after waiting); a caller's abort ends the wait. */
  admit(who: Caller, signal?: AbortSignal): Promise<CallSlot> {
    // Admitted at once (the usual case): a settled promise, no async call; a refusal rejects.
    try {
      const now = this.admitNow(who, signal);
      return now ? Promise.resolve(now) : this.admitWaiting(who, signal);
    } catch (e) {
      return Promise.reject(e);
    }
  }

  /**
   * The call's slot now, or null when it must wait in the queue for one (its counts are taken
   * already; admitWaiting waits); throws the refusal. A caller that can take a value admits so.
   */
  admitNow(who: Caller, signal?: AbortSignal): CallSlot | null {
    signal?.throwIfAborted();
    if (this.stopped) throw this.stopped;
    const { budget, perAccount, perKey } = this.limits;
    const nk = this.keys.get(who.keyId) ?? 0;
    const na = this.accounts.get(who.userId) ?? 0;
    if (perKey > 0 && nk >= perKey)
      throw refused(
        text(
          `이 API 키로 동시에 처리 중인 요청이 한도(${perKey}개)에 도달했습니다. 진행 중인 요청이 끝난 뒤 다시 시도하세요.`,
          `This API key has reached its limit of ${perKey} requests in progress. Try again when one finishes.`,
        ),
      );
    if (perAccount > 0 && na >= perAccount)
      throw refused(
        text(
          `계정에서 동시에 처리 중인 요청이 한도(${perAccount}개)에 도달했습니다. 진행 중인 요청이 끝난 뒤 다시 시도하세요.`,
          `The account has reached its limit of ${perAccount} requests in progress. Try again when one finishes.`,
        ),
      );
    let wait = false;
    let taken: Running | null = null;
    if (budget > 0) {
      const active = this.accounts.size + (na ? 0 : 1);
      const free = budget - this.inFlight;
      const share = Math.max(1, Math.floor(budget / active));
      if (free <= 0 || this.queue.length) {
        if (na >= share) throw refused(FAIR_SHARE);
        taken = free <= 0 ? this.victim(share) : null;
        if (!taken) {
          if (this.limits.queueTimeoutMs <= 0) throw busy();
          wait = true;
        }
      } else if (free <= Math.ceil(budget / 4) && na >= Math.max(1, Math.floor(budget / (active + 1))))
        throw refused(FAIR_SHARE);
    }
    add(this.accounts, who.userId, 1);
    add(this.keys, who.keyId, 1);
    if (taken) {
      // The slot changes hands: the budget's count stays, the pre-empted call's account loses it.
      this.preemptions++;
      this.drop(taken);
      taken.preempt(refused(FAIR_SHARE));
    } else if (wait) return null;
    else this.inFlight++;
    return this.slotFor(who);
  }

  /** A call admitNow counted (it answered null) waits in the queue for its slot. */
  async admitWaiting(who: Caller, signal?: AbortSignal): Promise<CallSlot> {
    try {
      await this.enqueue(who, signal);
    } catch (e) {
      this.forget(who);
      throw e;
    }
    return this.slotFor(who);
  }

  private slotFor(who: Caller): Running {
    const mine = new Running(who, this);
    const list = this.live.get(who.userId);
    if (list) list.push(mine);
    else this.live.set(who.userId, [mine]);
    return mine;
  }

  /** A running call gave its slot back (Running.release, once). */
  released(r: Running): void {
    this.drop(r);
    this.inFlight--;
    this.next();
  }

  /**
   * The process is stopping and its drain time is up (src/boot/shutdown.ts): every running
   * call's `preempted` signal aborts with `reason` (its upstream request is cut, its hold
   * released, its client answered `reason`), waiting calls get it, and later calls too.
   */
  stopAll(reason: GatewayError): void {
    this.stopped = reason;
    for (const w of [...this.queue]) w.fail(reason);
    // Copied first: an aborted call may release its slot at once, leaving the live lists.
    for (const r of [...this.live.values()].flat()) r.preempt(reason);
  }

  /** The newest running call of the account holding the most, when it holds more than `share`. */
  private victim(share: number): Running | null {
    let most: Running[] | null = null;
    for (const list of this.live.values()) if (!most || list.length > most.length) most = list;
    return most && most.length > share ? most[most.length - 1]! : null;
  }

  /** A running call leaves its account's counts (released, or pre-empted). */
  private drop(r: Running): void {
    r.gone = true;
    const list = this.live.get(r.who.userId);
    const i = list?.indexOf(r) ?? -1;
    if (i >= 0) list!.splice(i, 1);
    if (list && !list.length) this.live.delete(r.who.userId);
    this.forget(r.who);
  }

  private enqueue(who: Caller, signal: AbortSignal | undefined): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const leave = () => {
        clearTimeout(timer);
        signal?.removeEventListener("abort", onAbort);
        const i = this.queue.indexOf(w);
        if (i >= 0) this.queue.splice(i, 1);
      };
      const onAbort = () => {
        leave();
        reject(signal!.reason);
      };
      const timer = setTimeout(() => {
        leave();
        reject(busy());
      }, this.limits.queueTimeoutMs);
      const w: Waiter = {
        who,
        grant: () => {
          leave();
          this.inFlight++;
          resolve();
        },
        fail: (e) => {
          leave();
          reject(e);
        },
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      this.queue.push(w);
    });
  }

  /** A freed slot goes to the waiting account with the fewest calls (the longest waiting among equals). */
  private next(): void {
    if (!this.queue.length || this.inFlight >= this.limits.budget) return;
    let best = this.queue[0]!;
    let fewest = this.accounts.get(best.who.userId) ?? 0;
    for (const w of this.queue) {
      const n = this.accounts.get(w.who.userId) ?? 0;
      if (n < fewest) {
        best = w;
        fewest = n;
      }
    }
    best.grant();
  }

  private forget(who: Caller): void {
    add(this.accounts, who.userId, -1);
    add(this.keys, who.keyId, -1);
  }
}

/** The answer of a call the stopping process ends or no longer takes (src/boot/shutdown.ts). */
export function shuttingDown(): GatewayError {
  return new GatewayError(
    "service_unavailable",
    text(
      "게이트웨이가 종료 중입니다. 다른 인스턴스로 다시 시도하세요.",
      "The gateway is shutting down. Retry the request on another instance.",
    ),
    { retryAfter: RETRY_AFTER_S },
  );
}

function busy(): GatewayError {
  return new GatewayError(
    "service_unavailable",
    text(
      "처리 가능한 업스트림 연결이 모두 사용 중입니다. 잠시 후 다시 시도하세요.",
      "All upstream connections are in use. Try again shortly.",
    ),
    { retryAfter: RETRY_AFTER_S },
  );
}

function add(m: Map<string, number>, k: string, d: number): void {
  const n = (m.get(k) ?? 0) + d;
  if (n > 0) m.set(k, n);
  else m.delete(k);
}
