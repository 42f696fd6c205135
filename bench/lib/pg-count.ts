/**
 * A TCP proxy in front of PostgreSQL that counts what clients send, by message type of the
 * wire protocol: Execute ('E', one statement of the extended protocol), Query ('Q', a simple
 * query: one or more statements in one round trip) and Sync ('S', the end of one pipelined
 * exchange: a round trip). pg_stat_statements needs a server restart to load; this needs
 * nothing from the server. Bytes are forwarded untouched, written in order, with what a socket
 * could not take kept until it drains.
 */
import type { Socket, TCPSocketListener } from "bun";

export interface WireCounts {
  execute: number;
  query: number;
  sync: number;
}

/** The start of a statement's text, whitespace folded: enough to tell the statements apart. */
function label(text: string): string {
  return text.replace(/\s+/g, " ").trim().slice(0, 90);
}

/** The zero-terminated string at `at`, and where the next field starts. */
function cstring(b: Uint8Array, at: number): [string, number] {
  let end = at;
  while (end < b.length && b[end] !== 0) end++;
  return [new TextDecoder().decode(b.subarray(at, end)), end + 1];
}

interface Side {
  peer: Socket<Side> | null;
  /** Bytes for this socket that it has not taken yet (or that arrived before it connected). */
  backlog: Uint8Array[];
  /** Client side only: the unparsed tail of the message stream, and whether the startup message is past. */
  buf?: Uint8Array;
  started?: boolean;
  /** Client side only: prepared statement name → its text, and the statement of the last Bind. */
  stmts?: Map<string, string>;
  bound?: string;
}

function send(s: Socket<Side>, chunk: Uint8Array): void {
  if (s.data.backlog.length) return void s.data.backlog.push(chunk);
  const n = s.write(chunk);
  if (n < chunk.length) s.data.backlog.push(chunk.subarray(Math.max(0, n)));
}

function drain(s: Socket<Side>): void {
  while (s.data.backlog.length) {
    const c = s.data.backlog[0]!;
    const n = s.write(c);
    if (n < c.length) {
      s.data.backlog[0] = c.subarray(Math.max(0, n));
      return;
    }
    s.data.backlog.shift();
  }
}

export class PgCounter {
  readonly counts: WireCounts = { execute: 0, query: 0, sync: 0 };
  /** Statements run (executes and simple queries), by the start of their text. */
  readonly byStatement = new Map<string, number>();
  private listener: TCPSocketListener<Side> | null = null;

  constructor(
    private host: string,
    private port: number,
  ) {}

  get listenPort(): number {
    return this.listener!.port;
  }

  /** Counts the complete messages at the head of the client's stream (the startup message has no type byte). */
  private parse(side: Side, chunk: Uint8Array): void {
    let b = side.buf?.length ? concat(side.buf, chunk) : chunk;
    let at = 0;
    for (;;) {
      if (!side.started) {
        if (b.length - at < 4) break;
        const len = new DataView(b.buffer, b.byteOffset + at).getInt32(0);
        if (b.length - at < len) break;
        at += len;
        // An SSLRequest (code 80877103) is followed by the real startup message.
        side.started = len !== 8 || new DataView(b.buffer, b.byteOffset + at - 4).getInt32(0) !== 80877103;
        continue;
      }
      if (b.length - at < 5) break;
      const type = b[at]!;
      const len = new DataView(b.buffer, b.byteOffset + at + 1).getInt32(0);
      if (b.length - at < len + 1) break;
      const body = b.subarray(at + 5, at + 1 + len);
      const tally = (text: string) => this.byStatement.set(label(text), (this.byStatement.get(label(text)) ?? 0) + 1);
      if (type === 0x50) {
        const [name, next] = cstring(body, 0);
        side.stmts!.set(name, cstring(body, next)[0]);
      } else if (type === 0x42) side.bound = cstring(body, cstring(body, 0)[1])[0];
      else if (type === 0x45) {
        this.counts.execute++;
        tally(side.stmts!.get(side.bound ?? "") ?? "?");
      } else if (type === 0x51) {
        this.counts.query++;
        tally(cstring(body, 0)[0]);
      } else if (type === 0x53) this.counts.sync++;
      at += len + 1;
    }
    b = b.subarray(at);
    side.buf = b.length ? new Uint8Array(b) : undefined;
  }

  start(): this {
    const self = this;
    this.listener = Bun.listen<Side>({
      hostname: "127.0.0.1",
      port: 0,
      socket: {
        open(client) {
          client.data = { peer: null, backlog: [], started: false, stmts: new Map() };
          Bun.connect<Side>({
            hostname: self.host,
            port: self.port,
            socket: {
              open(up) {
                up.data = { peer: client, backlog: [] };
                client.data.peer = up;
                const early = client.data.backlog;
                client.data.backlog = [];
                for (const c of early) send(up, c);
              },
              data(up, chunk) {
                send(up.data.peer!, new Uint8Array(chunk));
              },
              drain,
              close(up) {
                up.data.peer?.end();
              },
              error(up) {
                up.data.peer?.end();
              },
            },
          }).catch(() => client.end());
        },
        data(client, chunk) {
          const c = new Uint8Array(chunk);
          self.parse(client.data, c);
          // Until the server side connects, the client's own backlog holds what goes upstream.
          if (client.data.peer) send(client.data.peer, c);
          else client.data.backlog.push(c);
        },
        drain,
        close(client) {
          client.data.peer?.end();
        },
        error(client) {
          client.data.peer?.end();
        },
      },
    });
    return this;
  }

  stop(): void {
    this.listener?.stop(true);
  }
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
}
