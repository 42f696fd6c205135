/** Helpers shared by the adapters' stream translators. */

/**
 * Yields the events of `source`; if reading the source fails (connection reset, idle deadline)
 * once `isComplete()` says the terminal marker has been seen, ends quietly instead: a
 * transport failure after the end of the answer cannot hurt it. Errors thrown by the consumer's
 * own processing are not affected (they never pass through here). Stopping early returns the
 * source, which cancels the upstream body.
 */
export async function* endQuietlyWhenComplete<T>(
  source: AsyncIterable<T>,
  isComplete: () => boolean,
): AsyncGenerator<T, void, undefined> {
  const it = source[Symbol.asyncIterator]();
  let finished = false;
  try {
    for (;;) {
      let r: IteratorResult<T>;
      try {
        r = await it.next();
      } catch (err) {
        finished = true;
        if (isComplete()) return;
        throw err;
      }
      if (r.done) {
        finished = true;
        return;
      }
      yield r.value;
    }
  } finally {
    if (!finished) await it.return?.().catch(() => {});
  }
}
