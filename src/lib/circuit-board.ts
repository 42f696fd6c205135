/**
 * Circuits opened by one instance, told to the others through Redis. One hash holds, per
 * circuit, when its cool-down ends and which instance opened it; every instance reads the hash
 * once a `pollMs` and adopts the opens it did not make itself. The hash expires a cool-down
 * after its last write, and an entry past its end means nothing, so a dead instance leaves no
 * open circuit behind. Closing is not shared: each instance probes for itself after the
 * cool-down (a probe is one real call; a shared close could send every instance's traffic at
 * once to a provider only one of them saw recover).
 *
 * A polled hash rather than pub/sub: it survives reconnects without resubscribing and lets a
 * starting instance learn the opens made before it. Redis is advisory here: a failed command
 * is logged once per outage and the instance goes on with what it learned by itself.
 */
import { RedisClient } from "bun";
import { log } from "./log";

export interface BoardEntry {
  provider: string;
  model: string;
  /** Epoch ms when the cool-down ends (the writer's clock). */
  until: number;
}

const HASH = "gw:circuits";

export class RedisCircuitBoard {
  private client: RedisClient;
  private timer: ReturnType<typeof setInterval>;
  private down = false;
  readonly instance = crypto.randomUUID();

  constructor(
    url: string,
    private onOpen: (e: BoardEntry) => void,
    private ttlMs: number,
    pollMs = 1000,
  ) {
    this.client = new RedisClient(url, {
      connectionTimeout: 1000,
      enableOfflineQueue: false,
      autoReconnect: true,
      maxRetries: 1000000,
    });
    this.client.connect().catch(() => {});
    this.timer = setInterval(() => void this.poll(), pollMs);
    this.timer.unref?.();
  }

  /** This instance opened a circuit until `until`. */
  opened(e: BoardEntry): void {
    const field = `${e.provider}\u0000${e.model}`;
    void this.run(async () => {
      await this.client.send("HSET", [HASH, field, `${e.until}:${this.instance}`]);
      await this.client.send("PEXPIRE", [HASH, String(Math.max(1000, Math.ceil(e.until - Date.now() + this.ttlMs)))]);
    });
  }

  /** This instance closed a circuit: other instances' probes decide for themselves. */
  closed(provider: string, model: string): void {
    void this.run(() => this.client.send("HDEL", [HASH, `${provider}\u0000${model}`]));
  }

  /** Reads the hash once and adopts the other instances' opens still running. */
  async poll(): Promise<void> {
    const raw = await this.run(() => this.client.send("HGETALL", [HASH]));
    if (!raw) return;
    // RESP3 answers a map (an object), RESP2 a flat array.
    const pairs: [string, string][] = Array.isArray(raw)
      ? raw.flatMap((v, i) => (i % 2 ? [] : [[String(v), String(raw[i + 1])] as [string, string]]))
      : Object.entries(raw as Record<string, string>);
    const now = Date.now();
    for (const [field, value] of pairs) {
      const [provider, model] = field.split("\u0000");
      const [untilText, writer] = String(value).split(":");
      const until = Number(untilText);
      if (!provider || !model || writer === this.instance || !(until > now)) continue;
      this.onOpen({ provider, model, until });
    }
  }

  private async run<T>(f: () => Promise<T>): Promise<T | null> {
    try {
      // Without an offline queue a command sent while connecting fails: wait for the connection, briefly.
      if (!this.client.connected)
        await Promise.race([
          this.client.connect(),
          Bun.sleep(1000).then(() => Promise.reject(new Error("redis connect timed out"))),
        ]);
      const v = await f();
      if (this.down) log.info("circuit board: Redis is back");
      this.down = false;
      return v;
    } catch (e) {
      if (!this.down)
        log.warn("circuit board: Redis unreachable, circuits stay local to this instance", {
          error: e instanceof Error ? e.message : String(e),
        });
      this.down = true;
      return null;
    }
  }

  close(): void {
    clearInterval(this.timer);
    this.client.close();
  }
}
