/**
 * A byte spool of numbered entries whose memory does not grow with its size: the first
 * `memoryBytes` stay in memory, the rest go to a temporary file that is unlinked as soon as it
 * is opened (it disappears with the descriptor, even on a crash). Used to hold an embeddings
 * answer between the upstream (read incrementally) and the client (written as a stream), so
 * the answer is complete, and its cost known, before the first byte goes out. Past `maxBytes`
 * an append throws the caller's error: a bound on what one answer may occupy on disk.
 */
import { closeSync, ftruncateSync, openSync, readSync, unlinkSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export class Spool {
  private mem: Uint8Array;
  private fd: number | null = null;
  private size = 0;
  private start = 0;
  /** Pairs of (offset, length), one per ended entry. */
  private entries: number[] = [];
  private closed = false;

  constructor(
    private readonly maxBytes: number,
    private readonly full: () => Error,
    private readonly memoryBytes = 1 << 20,
  ) {
    this.mem = new Uint8Array(Math.min(64 << 10, memoryBytes));
  }

  /** Appends to the entry being written. */
  write(b: Uint8Array): void {
    if (this.size + b.length > this.maxBytes) throw this.full();
    const end = this.size + b.length;
    if (this.fd === null && end <= this.memoryBytes) {
      if (end > this.mem.length) {
        const grown = new Uint8Array(Math.min(this.memoryBytes, Math.max(end, this.mem.length * 2)));
        grown.set(this.mem.subarray(0, this.size));
        this.mem = grown;
      }
      this.mem.set(b, this.size);
    } else {
      if (this.fd === null) this.spill();
      let done = 0;
      while (done < b.length) done += writeSync(this.fd!, b, done, b.length - done, this.size + done);
    }
    this.size = end;
  }

  /** Ends the entry being written; returns its number (0, 1, ... in the order they ended). */
  end(): number {
    this.entries.push(this.start, this.size - this.start);
    this.start = this.size;
    return this.entries.length / 2 - 1;
  }

  /** Forgets everything written (a new attempt starts over). */
  reset(): void {
    this.size = 0;
    this.start = 0;
    this.entries = [];
    if (this.fd !== null) ftruncateSync(this.fd, 0);
  }

  get count(): number {
    return this.entries.length / 2;
  }

  /** Bytes written so far, all entries together. */
  get bytes(): number {
    return this.size;
  }

  lengthOf(entry: number): number {
    return this.entries[entry * 2 + 1]!;
  }

  /** Up to `max` bytes of `entry` from `from` (a fresh array). */
  read(entry: number, from: number, max: number): Uint8Array {
    if (this.closed) throw new Error("spool closed");
    const offset = this.entries[entry * 2]! + from;
    const n = Math.min(max, this.lengthOf(entry) - from);
    if (this.fd === null) return this.mem.slice(offset, offset + n);
    const out = new Uint8Array(n);
    let got = 0;
    while (got < n) {
      const r = readSync(this.fd, out, got, n - got, offset + got);
      if (r <= 0) throw new Error("spool file ended early");
      got += r;
    }
    return out;
  }

  /** Frees the memory and the file. Idempotent. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.mem = new Uint8Array(0);
    if (this.fd !== null) closeSync(this.fd);
    this.fd = null;
  }

  private spill(): void {
    const path = join(tmpdir(), `gateway-spool-${process.pid}-${crypto.randomUUID()}`);
    this.fd = openSync(path, "w+", 0o600);
    unlinkSync(path);
    let done = 0;
    while (done < this.size) done += writeSync(this.fd, this.mem, done, this.size - done, done);
    this.mem = new Uint8Array(0);
  }
}
