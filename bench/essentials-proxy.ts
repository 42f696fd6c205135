/**
 * The "essentials" peer: a Bun proxy doing the least a billing gateway must do on every call,
 * and nothing more, so the benchmark can tell the cost of the essentials from the cost of the
 * gateway's own design. Per call: the key looked up in an in-memory map, the JSON body parsed
 * and its model rewritten (alias → upstream name), the upstream called, the usage read from the
 * answer (the JSON body, or the SSE stream's usage chunk, scanned as it passes), and the
 * account's in-memory balance decremented by the priced usage. No database, no log line.
 *
 *   ESSENTIALS_PORT=8092 UPSTREAM=http://127.0.0.1:8090/sim ESSENTIALS_KEYS=k1,k2 bun bench/essentials-proxy.ts
 *
 * Routes: `/openai/v1/chat/completions` and `/anthropic/v1/messages` (the path names the
 * provider, as for bench/proxy.ts). `GET /health`; `GET /ledger` answers the balances, so a run
 * can check that the decrements happened.
 */
const upstream = (process.env.UPSTREAM ?? "").replace(/\/+$/, "");
if (!upstream) throw new Error("UPSTREAM is required (e.g. http://127.0.0.1:8090/sim)");

interface Account {
  balanceMicro: bigint;
  calls: number;
}
/** Key → account: the lookup a gateway does on every call (its hash, here the key itself). */
const accounts = new Map<string, Account>();
for (const key of (process.env.ESSENTIALS_KEYS ?? "").split(",").filter(Boolean))
  accounts.set(key, { balanceMicro: 10_000_000_000_000n, calls: 0 });
/** Model aliases a gateway resolves; anything else passes as it is. */
const ALIASES: Record<string, string> = { "gpt-4o-mini": "gpt-4o-mini-2024-07-18" };
/** Micro-KRW per token, input and output: one flat price is enough to exercise the arithmetic. */
const PRICE = { in: 200n, out: 800n };

const keyOf = (req: Request): string | null => {
  const auth = req.headers.get("authorization");
  if (auth?.startsWith("Bearer ")) return auth.slice(7);
  return req.headers.get("x-api-key");
};

function charge(account: Account, usage: unknown): void {
  const u = usage as Record<string, number> | null | undefined;
  if (!u) return;
  const input = BigInt(u.prompt_tokens ?? u.input_tokens ?? 0);
  const output = BigInt(u.completion_tokens ?? u.output_tokens ?? 0);
  account.balanceMicro -= input * PRICE.in + output * PRICE.out;
  account.calls++;
}

const USAGE = new TextEncoder().encode('"usage"');
function includes(chunk: Uint8Array, needle: Uint8Array): boolean {
  outer: for (let i = 0; i <= chunk.length - needle.length; i++) {
    for (let j = 0; j < needle.length; j++) if (chunk[i + j] !== needle[j]) continue outer;
    return true;
  }
  return false;
}

/** Passes the stream on as it arrives; parses only the events that carry usage. */
function meteredStream(body: ReadableStream<Uint8Array>, account: Account): ReadableStream<Uint8Array> {
  const dec = new TextDecoder();
  let usage: unknown = null;
  const scan = (text: string) => {
    for (const line of text.split("\n")) {
      if (!line.startsWith("data: ") || !line.includes('"usage"')) continue;
      try {
        const j = JSON.parse(line.slice(6));
        const u = j.usage ?? j.message?.usage;
        if (u) usage = { ...(usage as object), ...u };
      } catch {
        // A usage line split across two reads: the next read carries the rest.
      }
    }
  };
  return body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, out) {
        if (includes(chunk, USAGE)) scan(dec.decode(chunk));
        out.enqueue(chunk);
      },
      flush() {
        charge(account, usage);
      },
    }),
  );
}

const server = Bun.serve({
  port: Number(process.env.ESSENTIALS_PORT ?? 0),
  hostname: "127.0.0.1",
  idleTimeout: 255,
  async fetch(req) {
    const path = req.url.slice(req.url.indexOf("/", 8));
    if (path === "/health") return new Response("ok");
    if (path === "/ledger")
      return Response.json(
        Object.fromEntries([...accounts].map(([k, a]) => [k.slice(0, 8), { ...a, balanceMicro: `${a.balanceMicro}` }])),
      );
    const key = keyOf(req);
    const account = key ? accounts.get(key) : undefined;
    if (!account) return Response.json({ error: { message: "invalid key" } }, { status: 401 });
    let body: Record<string, unknown>;
    try {
      body = (await req.json()) as Record<string, unknown>;
    } catch {
      return Response.json({ error: { message: "invalid JSON" } }, { status: 400 });
    }
    const model = String(body.model ?? "");
    body.model = ALIASES[model] ?? model;
    const up = await fetch(upstream + path, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        authorization: "Bearer simulated",
        "x-api-key": "simulated",
        "anthropic-version": req.headers.get("anthropic-version") ?? "2023-06-01",
      },
      body: JSON.stringify(body),
    });
    const type = up.headers.get("content-type") ?? "application/json";
    if (type.startsWith("text/event-stream") && up.body)
      return new Response(meteredStream(up.body, account), { status: up.status, headers: { "content-type": type } });
    const text = await up.text();
    if (up.status === 200) {
      try {
        charge(account, (JSON.parse(text) as { usage?: unknown }).usage);
      } catch {
        // Not JSON: nothing to meter.
      }
    }
    return new Response(text, { status: up.status, headers: { "content-type": type } });
  },
});
console.log(`essentials proxy on http://127.0.0.1:${server.port} -> ${upstream}`);
for (const s of ["SIGINT", "SIGTERM"] as const) process.on(s, () => void server.stop(true).then(() => process.exit(0)));
export {};
