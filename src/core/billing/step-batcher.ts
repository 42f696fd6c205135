/**
 * Natural batching: a call starts at once while a slot is free; calls arriving meanwhile wait
 * for the next free slot and go together in one statement (settles, then holds). No timer, so
 * an idle system sends every call alone and at once. docs/ledger.md, "The layers".
 */
/** A call waiting for its statement: resolved or rejected once with its own answer; neither may throw. */
export interface Pending<T, R> {
  item: T;
  resolve(r: R): void;
  reject(e: unknown): void;
}

export interface StepOps<H, HR, S, SR> {
  /** Runs the settles, then the holds, in one transaction; results in input order. */
  step(settles: S[], holds: H[]): Promise<{ settles: SR[]; holds: HR[] }>;
  /** One call alone (a batch of one, or the retry of a batch that failed as a whole). */
  hold(item: H): Promise<HR>;
  settle(item: S): Promise<SR>;
  /**
   * A failure of the batch that every call of it would meet alone (the database unreachable):
   * its calls all fail with it at once instead of each being retried alone, which would cost
   * every one of them a second query deadline while the database is down.
   */
  failsAll?(e: unknown): boolean;
}

export class StepBatcher<H, HR, S, SR> {
  private holds: Pending<H, HR>[] = [];
  private settles: Pending<S, SR>[] = [];
  private free: number;

  constructor(
    slots: number,
    private maxBatch: number,
    private ops: StepOps<H, HR, S, SR>,
  ) {
    this.free = slots;
  }

  hold(item: H): Promise<HR> {
    return new Promise<HR>((resolve, reject) => {
      this.holds.push({ item, resolve, reject });
      this.pump();
    });
  }

  settle(item: S): Promise<SR> {
    return new Promise<SR>((resolve, reject) => this.settleVia({ item, resolve, reject }));
  }

  /** Queues a settle that answers itself: a caller with an object per call makes no promise here. */
  settleVia(p: Pending<S, SR>): void {
    this.settles.push(p);
    this.pump();
  }

  private pump(): void {
    while (this.free > 0 && (this.holds.length || this.settles.length)) {
      this.free--;
      const settles = this.settles.splice(0, this.maxBatch);
      const holds = this.holds.splice(0, this.maxBatch);
      void this.run(settles, holds).finally(() => {
        this.free++;
        this.pump();
      });
    }
  }

  private async run(settles: Pending<S, SR>[], holds: Pending<H, HR>[]): Promise<void> {
    if (settles.length + holds.length === 1) {
      if (settles.length) await this.alone(settles[0]!, this.ops.settle);
      else await this.alone(holds[0]!, this.ops.hold);
      return;
    }
    let out: { settles: SR[]; holds: HR[] };
    try {
      out = await this.ops.step(
        settles.map((p) => p.item),
        holds.map((p) => p.item),
      );
    } catch (e) {
      if (this.ops.failsAll?.(e)) {
        for (const p of [...settles, ...holds]) p.reject(e);
        return;
      }
      // The statement rolled back as a whole: retry each call on its own, so one failing call
      // (or a serialization hiccup) only fails itself. Settles first, as in the statement.
      await Promise.all(settles.map((p) => this.alone(p, this.ops.settle)));
      await Promise.all(holds.map((p) => this.alone(p, this.ops.hold)));
      return;
    }
    settles.forEach((p, i) => p.resolve(out.settles[i]!));
    holds.forEach((p, i) => p.resolve(out.holds[i]!));
  }

  /** One call alone; `p`'s methods are called as methods (a Pending may be a class instance). */
  private async alone<T, R>(p: Pending<T, R>, f: (item: T) => Promise<R>): Promise<void> {
    let r: R;
    try {
      r = await f(p.item);
    } catch (e) {
      p.reject(e);
      return;
    }
    p.resolve(r);
  }
}
