/** Shared helpers for adapter tests: fixtures, random chunking, a local fixture server. */
import type { CallContext } from "../../src/core/model/provider";
import type { StreamEvent } from "../../src/core/model/types";
import { SseDecoder, type SseEvent } from "../../src/lib/sse";

const FIXTURES = new URL("../fixtures/", import.meta.url);

export async function fixtureBytes(vendor: string, name: string): Promise<Uint8Array> {
  return new Uint8Array(await Bun.file(new URL(`${vendor}/${name}`, FIXTURES)).arrayBuffer());
}

export async function fixtureJson(vendor: string, name: string): Promise<any> {
  return JSON.parse(await Bun.file(new URL(`${vendor}/${name}`, FIXTURES)).text());
}

export interface HttpFixture {
  status: number;
  headers: Headers;
  body: string;
}

/** Parses a raw `.http` fixture: status line, CRLF headers, blank line, body. */
export async function httpFixture(vendor: string, name: string): Promise<HttpFixture> {
  const text = await Bun.file(new URL(`${vendor}/${name}`, FIXTURES)).text();
  const split = text.indexOf("\r\n\r\n");
  const head = text.slice(0, split).split("\r\n");
  const status = Number(head[0]!.split(" ")[1]);
  const headers = new Headers();
  for (const line of head.slice(1)) {
    const i = line.indexOf(":");
    headers.append(line.slice(0, i).trim(), line.slice(i + 1).trim());
  }
  return { status, headers, body: text.slice(split + 4) };
}

/** A deterministic PRNG. */
export function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Splits bytes at random points (1..maxSize bytes per chunk). */
export function randomChunks(bytes: Uint8Array, seed: number, maxSize = 17): Uint8Array[] {
  const r = rng(seed);
  const out: Uint8Array[] = [];
  for (let pos = 0; pos < bytes.length; ) {
    const size = 1 + Math.floor(r() * maxSize);
    out.push(bytes.subarray(pos, pos + size));
    pos += size;
  }
  return out;
}

/** Decodes SSE bytes (split into random chunks) into an async iterable of events, as the adapters get them. */
export async function* sseEventsOf(bytes: Uint8Array, seed = 1): AsyncGenerator<SseEvent> {
  const d = new SseDecoder();
  for (const c of randomChunks(bytes, seed)) for (const ev of d.push(c)) yield ev;
  for (const ev of d.end()) yield ev;
}

/** Drains a typed stream; returns the events before any error and the error itself. */
export async function drain(stream: AsyncIterable<StreamEvent>): Promise<{ events: StreamEvent[]; error?: any }> {
  const events: StreamEvent[] = [];
  try {
    for await (const ev of stream) events.push(ev);
    return { events };
  } catch (error) {
    return { events, error };
  }
}

export function textOf(events: StreamEvent[]): string {
  return events.map((e) => (e.type === "text" ? e.text : "")).join("");
}

export function ctxFor(baseUrl: string, over: Partial<CallContext> = {}): CallContext {
  return { providerId: "test", baseUrl, apiKey: "test-key", firstByteTimeoutMs: 2000, idleTimeoutMs: 2000, ...over };
}

export interface CapturedRequest {
  method: string;
  path: string;
  headers: Headers;
  body: any;
}

/** A scripted reply for the fixture server. */
export type Reply =
  | {
      kind: "body";
      status?: number;
      headers?: Record<string, string>;
      body: Uint8Array | string;
      chunkDelayMs?: number;
      chunkSize?: number;
    }
  | { kind: "http"; fixture: HttpFixture }
  | { kind: "hang" }
  /** Sends these bytes, then stalls forever (for idle timeouts). */
  | { kind: "stall"; body: Uint8Array | string };

/** A real HTTP server on 127.0.0.1:0 that answers every request with the next scripted reply. */
export function fixtureServer(reply: (req: CapturedRequest) => Reply) {
  const requests: CapturedRequest[] = [];
  let aborted = 0;
  const enc = new TextEncoder();
  const bytesOf = (b: Uint8Array | string) => (typeof b === "string" ? enc.encode(b) : b);
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    idleTimeout: 0,
    async fetch(req, srv) {
      const url = new URL(req.url);
      const text = await req.text();
      let body: any = text;
      try {
        body = JSON.parse(text);
      } catch {}
      const captured = { method: req.method, path: url.pathname + url.search, headers: req.headers, body };
      requests.push(captured);
      req.signal.addEventListener("abort", () => aborted++);
      const r = reply(captured);
      switch (r.kind) {
        case "hang":
          return new Promise<Response>(() => {});
        case "http":
          return new Response(r.fixture.body, { status: r.fixture.status, headers: r.fixture.headers });
        case "stall": {
          const bytes = bytesOf(r.body);
          return new Response(
            new ReadableStream<Uint8Array>({
              start(c) {
                c.enqueue(bytes);
              },
            }),
            { headers: { "content-type": "text/event-stream" } },
          );
        }
        case "body": {
          const bytes = bytesOf(r.body);
          const headers = { "content-type": "application/json", ...r.headers };
          if (!r.chunkDelayMs) return new Response(bytes, { status: r.status ?? 200, headers });
          const size = r.chunkSize ?? 64;
          return new Response(
            new ReadableStream<Uint8Array>({
              async start(c) {
                for (let i = 0; i < bytes.length; i += size) {
                  c.enqueue(bytes.subarray(i, i + size));
                  await Bun.sleep(r.chunkDelayMs!);
                }
                c.close();
              },
            }),
            { status: r.status ?? 200, headers },
          );
        }
      }
    },
  });
  return {
    url: `http://127.0.0.1:${server.port}`,
    requests,
    get aborted() {
      return aborted;
    },
    stop: () => server.stop(true),
  };
}

/**
 * A raw TCP "HTTP server" for what Bun.serve cannot do: send the response headers and then
 * nothing (Bun.serve only flushes headers with the first body chunk), or cut a chunked body off
 * by closing the socket.
 */
export function rawHttpServer(script: { chunks: string[]; then: "stall" | "close" }) {
  const listener = Bun.listen({
    hostname: "127.0.0.1",
    port: 0,
    socket: {
      data(socket) {
        let out = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n";
        for (const c of script.chunks) {
          const len = Buffer.byteLength(c);
          out += `${len.toString(16)}\r\n${c}\r\n`;
        }
        socket.write(out);
        if (script.then === "close") setTimeout(() => socket.end(), 20);
      },
    },
  });
  return { url: `http://127.0.0.1:${listener.port}`, stop: () => listener.stop(true) };
}
