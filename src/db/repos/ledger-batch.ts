/**
 * Natural batching for the ledger: a call starts at once while fewer than `maxInflight`
 * batches are running; calls arriving meanwhile wait for the next free slot and go together.
 * No timer: an idle system sends every call alone and immediately.
 */
interface Pending<T, R> {
  item: T;
  resolve(r: R): void;
  reject(e: unknown): void;
}

export class Batcher<T, R> {
  private queue: Pending<T, R>[] = [];
  private inflight = 0;

  constructor(
    private maxInflight: number,
    private maxBatch: number,
    /** Runs many calls in one transaction; results in input order. */
    private many: (items: T[]) => Promise<R[]>,
    private one: (item: T) => Promise<R>,
    /** Lock-order key: a batch runs sorted by it. */
    private order: (item: T) => string,
  ) {}

  submit(item: T): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      this.pump();
    });
  }

  private pump(): void {
    while (this.inflight < this.maxInflight && this.queue.length) {
      const batch = this.queue.splice(0, this.maxBatch);
      this.inflight++;
      void this.run(batch).finally(() => {
        this.inflight--;
        this.pump();
      });
    }
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
