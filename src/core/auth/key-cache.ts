/**
 * In-process cache of key lookups, so authentication costs no database round trip on the hot
 * path. Entries live a short TTL and are dropped at once when this instance changes a key or
 * user, and within a second on other instances (the invalidation bus delivers the event).
 */
import type { KeyPrincipal } from "./principal";

interface Entry {
  value: KeyPrincipal | null;
  at: number;
}

export class KeyCache {
  private byHash = new Map<string, Entry>();
  constructor(
    private ttlMs = 30_000,
    private negativeTtlMs = 2_000,
    private maxEntries = 100_000,
  ) {}

  get(hash: string, now = Date.now()): KeyPrincipal | null | undefined {
    const e = this.byHash.get(hash);
    if (!e) return undefined;
    if (now - e.at > (e.value ? this.ttlMs : this.negativeTtlMs)) {
      this.byHash.delete(hash);
      return undefined;
    }
    return e.value;
  }

  set(hash: string, value: KeyPrincipal | null, now = Date.now()): void {
    if (this.byHash.size >= this.maxEntries) this.byHash.clear();
    this.byHash.set(hash, { value, at: now });
  }

  invalidateKey(keyId: string): void {
    for (const [h, e] of this.byHash) if (!e.value || e.value.keyId === keyId) this.byHash.delete(h);
  }

  invalidateUser(userId: string): void {
    for (const [h, e] of this.byHash) if (!e.value || e.value.user.id === userId) this.byHash.delete(h);
  }

  clear(): void {
    this.byHash.clear();
  }
}
