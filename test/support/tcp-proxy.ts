/**
 * A TCP proxy between a gateway and PostgreSQL that a test can cut and restore, to stage a
 * database outage without stopping the shared server:
 * - `cut("refuse")`: every open connection is dropped and new ones are closed at once (a
 *   crashed or restarting server, a firewall sending resets);
 * - `cut("blackhole")`: open connections are dropped and new ones are accepted but never
 *   answered (a network partition: the client only learns from its own timeouts);
 * - `restore()`: new connections are forwarded again.
 */
import type { Socket, TCPSocketListener } from "bun";

type Mode = "open" | "refuse" | "blackhole";

interface Client {
  upstream: Socket<Peer> | null;
  /** Bytes the client sent before the upstream connection was ready. */
  pending: Uint8Array[];
  closed: boolean;
}
interface Peer {
  client: Socket<Client>;
}

export class TcpProxy {
  private listener: TCPSocketListener<Client> | null = null;
  private mode: Mode = "open";
  private clients = new Set<Socket<Client>>();
  /** Connections accepted over the proxy's life (a reconnect shows up here). */
  accepted = 0;

  constructor(
    private targetHost: string,
    private targetPort: number,
  ) {}

  get port(): number {
    return this.listener!.port;
  }

  start(port = 0): this {
    const self = this;
    this.listener = Bun.listen<Client>({
      hostname: "127.0.0.1",
      port,
      socket: {
        open(client) {
          self.accepted++;
          client.data = { upstream: null, pending: [], closed: false };
          if (self.mode === "refuse") return void client.end();
          self.clients.add(client);
          if (self.mode === "blackhole") return; // accepted, never answered
          Bun.connect<Peer>({
            hostname: self.targetHost,
            port: self.targetPort,
            socket: {
              open(up) {
                up.data = { client };
                if (client.data.closed) return void up.end();
                client.data.upstream = up;
                for (const chunk of client.data.pending) up.write(chunk);
                client.data.pending = [];
              },
              data(up, chunk) {
                up.data.client.write(chunk);
              },
              close(up) {
                up.data.client.end();
              },
              error(up) {
                up.data.client.end();
              },
            },
          }).catch(() => client.end());
        },
        data(client, chunk) {
          if (self.mode === "blackhole" && !client.data.upstream) return;
          if (client.data.upstream) client.data.upstream.write(chunk);
          else client.data.pending.push(new Uint8Array(chunk));
        },
        close(client) {
          client.data.closed = true;
          self.clients.delete(client);
          client.data.upstream?.end();
        },
        error(client) {
          client.data.closed = true;
          self.clients.delete(client);
          client.data.upstream?.end();
        },
      },
    });
    return this;
  }

  /** Drops every open connection and refuses or swallows new ones. */
  cut(how: "refuse" | "blackhole" = "refuse"): void {
    this.mode = how;
    for (const c of [...this.clients]) {
      c.data.upstream?.terminate();
      c.terminate();
    }
    this.clients.clear();
  }

  restore(): void {
    this.mode = "open";
    // Swallowed connections of a blackhole are dropped, so their clients reconnect.
    for (const c of [...this.clients]) if (!c.data.upstream) c.end();
  }

  stop(): void {
    this.cut("refuse");
    this.listener?.stop(true);
  }
}
