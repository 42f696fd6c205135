/**
 * Natural batching for the ledger: a call starts at once while a slot is free; calls arriving
 * meanwhile wait for the next free slot and go together. No timer: an idle system sends every
 * call alone and immediately. Several batchers can share one slot budget (a `Lane`), so that
 * at most `slots` ledger statements are ever in flight against the same hot rows.
 */
interface Pending<T, R> {
  item: T;
  resolve(r: R): void;
  reject(e: unknown): void;
}

/** A budget of concurrent statements shared by batchers; a freed slot goes round-robin. */
export class Lane {
  private free: number;
  private members: Batcher<any, any>[] = [];
  private next = 0;
  constructor(slots: number) {
    this.free = slots;
  }
  join(b: Batcher<any, any>): void {
    this.members.push(b);
  }
  /** Starts queued batches while slots are free, taking turns between the batchers. */
  pump(): void {
    let idle = 0;
    while (this.free > 0 && idle < this.members.length) {
      const b = this.members[this.next]!;
      this.next = (this.next + 1) % this.members.length;
      if (b.startOne()) {
        this.free--;
        idle = 0;
      } else idle++;
    }
  }
  release(): void {
    this.free++;
    this.pump();
  }
}

export class Batcher<T, R> {
  private queue: Pending<T, R>[] = [];

  constructor(
    private lane: Lane,
    private maxBatch: number,
    /** Runs many calls in one transaction; results in input order. */
    private many: (items: T[]) => Promise<R[]>,
    private one: (item: T) => Promise<R>,
    /** Lock-order key: a batch runs sorted by it. */
    private order: (item: T) => string,
  ) {
    lane.join(this);
  }

  submit(item: T): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      this.lane.pump();
    });
  }

  /** Starts the next batch if anything is queued (the lane has reserved a slot for it). */
  startOne(): boolean {
    if (!this.queue.length) return false;
    const batch = this.queue.splice(0, this.maxBatch);
    void this.run(batch).finally(() => this.lane.release());
    return true;
  }

  private async run(batch: Pending<T, R>[]): Promise<void> {
    if (batch.length === 1) {
      const p = batch[0]!;
      await this.one(p.item).then(p.resolve, p.reject);
      return;
    }
    // Stable sort: calls of one user keep their arrival order.
    batch.sort((a, b) => {
      const x = this.order(a.item);
      const y = this.order(b.item);
      return x < y ? -1 : x > y ? 1 : 0;
    });
    let results: R[];
    try {
      results = await this.many(batch.map((p) => p.item));
    } catch {
      // The batch's transaction rolled back as a whole: retry each call on its own, so one
      // failing call (or a serialization hiccup) only fails itself.
      await Promise.all(batch.map((p) => this.one(p.item).then(p.resolve, p.reject)));
      return;
    }
    batch.forEach((p, i) => p.resolve(results[i]!));
  }
}
