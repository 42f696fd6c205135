/**
 * Helpers of the end-to-end tests that make model calls (chat, billing, embeddings, Messages,
 * Responses, stats, security and more): fast tenants, an OpenAI SDK client that
 * never retries on its own (so upstream attempt counts are the gateway's), raw SSE reading,
 * exact balances from the database, simulator call counts, and a recording proxy that stands
 * between the gateway and the simulator to show what actually left for a provider.
 */
import OpenAI from "openai";
import type { TestGateway, TestUser } from "../harness";
import { signJwt } from "../../src/lib/jwt";
import shippedCatalog from "../../src/core/catalog/catalog.json" with { type: "json" };

const PASSWORD = "correct horse battery";
let passwordHash: Promise<string> | null = null;

/**
 * A new account without signup's and login's argon2 rounds (a quarter second each): the row
 * goes in through the repository, the token is signed as login signs it. Signup itself is
 * covered by the HTTP suites.
 */
export async function fastUser(g: TestGateway, opts: { creditKrw?: number } = {}): Promise<TestUser> {
  passwordHash ??= Bun.password.hash(PASSWORD, { algorithm: "argon2id" });
  const email = `c${crypto.randomUUID().slice(0, 12)}@test.example`;
  const row = await g.gw.deps.users.create({
    email,
    passwordHash: await passwordHash,
    industry: "general",
    regulated: false,
  });
  if (!row) throw new Error("fastUser: insert failed");
  if (opts.creditKrw) await g.credit(row.id, opts.creditKrw);
  const jwt = signJwt({ sub: row.id, typ: "access" }, g.gw.deps.jwtSecret, g.gw.deps.config.JWT_TTL_SECONDS);
  return { id: row.id, email, password: PASSWORD, jwt };
}

/** A user with credits and one key (extra key fields optional). */
export async function tenant(g: TestGateway, creditKrw = 1000, keyBody: Record<string, unknown> = {}) {
  const user = await fastUser(g, { creditKrw });
  const key = await g.newKey(user, keyBody);
  return { user, key, sdk: sdk(g, key.key) };
}

/** The official SDK pointed at the gateway; SDK-side retries off so every attempt is ours. */
export function sdk(g: TestGateway, apiKey: string): OpenAI {
  return new OpenAI({ apiKey, baseURL: g.url + "/v1", maxRetries: 0, timeout: 20_000 });
}

export const user = (content: string) => [{ role: "user" as const, content }];

/** POST /v1/chat/completions with a raw body (JSON reply parsed). */
export function chat(g: TestGateway, apiKey: string, body: unknown, headers?: Record<string, string>) {
  return g.call("POST", "/v1/chat/completions", { token: apiKey, body, headers });
}

/** POST /v1/chat/completions, returning the fetch Response unread (for streams). */
export function chatFetch(
  g: TestGateway,
  apiKey: string,
  body: unknown,
  init: { signal?: AbortSignal; headers?: Record<string, string> } = {},
) {
  return fetch(g.url + "/v1/chat/completions", {
    method: "POST",
    headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json", ...init.headers },
    body: JSON.stringify(body),
    signal: init.signal,
  });
}

export interface SseEvent {
  /** The raw event text, without the blank-line terminator. */
  raw: string;
  /** `data:` payload (lines joined), or null for a comment-only event. */
  data: string | null;
  /** The payload parsed as JSON (null for `[DONE]`, comments and non-JSON). */
  json: any;
}

/** Splits an SSE body into events (LF or CRLF framing). */
export function parseSse(text: string): SseEvent[] {
  return text
    .split(/\r?\n\r?\n/)
    .filter((e) => e.length > 0)
    .map((raw) => {
      const lines = raw.split(/\r?\n/);
      const data = lines.filter((l) => l.startsWith("data:")).map((l) => l.replace(/^data: ?/, ""));
      const d = data.length ? data.join("\n") : null;
      let json: any = null;
      if (d && d !== "[DONE]") {
        try {
          json = JSON.parse(d);
        } catch {}
      }
      return { raw, data: d, json };
    });
}

/** Exact balance and held amount of a user, in micro-won (from the database, as /v1/me reads it). */
export async function money(g: TestGateway, userId: string): Promise<{ balance: bigint; held: bigint }> {
  // As the account's dashboard endpoints do: the settles behind this account's answers land first.
  await g.gw.settlements.quiesce(userId);
  const rows = await g.gw.deps.db.query<{ b: string; h: string }>(
    "select balance_micro::text as b, held_micro::text as h from users where id = $1",
    [userId],
  );
  return { balance: BigInt(rows[0]!.b), held: BigInt(rows[0]!.h) };
}

/** KRW number (≤ 6 decimals, as the API shows balances) → micro-won, exactly. */
export function krwMicro(krw: number): bigint {
  const [i, f = ""] = krw.toFixed(6).split(".");
  const neg = i!.startsWith("-");
  const v = BigInt(i!.replace("-", "")) * 1_000_000n + BigInt(f.padEnd(6, "0"));
  return neg ? -v : v;
}

/** The exact charge of one request (micro-won), or null when none was written. */
export async function chargeOf(g: TestGateway, requestId: string): Promise<bigint | null> {
  await g.gw.settlements.quiesce(); // the settle lands behind the answer
  const rows = await g.gw.deps.db.query<{ a: string }>(
    "select (-amount_micro)::text as a from ledger_entries where request_id = $1 and kind = 'charge'",
    [requestId],
  );
  return rows.length ? BigInt(rows[0]!.a) : null;
}

/** The usage event of one request. */
export async function usageOf(g: TestGateway, requestId: string): Promise<any | null> {
  await g.gw.settlements.quiesce(); // the settle lands behind the answer
  const rows = await g.gw.deps.db.query("select * from usage_events where request_id = $1", [requestId]);
  return rows[0] ?? null;
}

/** Chat-completion calls the simulator received, per provider (all protocols' chat paths). */
export function simChatCalls(g: TestGateway): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [provider, routes] of Object.entries(g.gw.sim!.stats().calls)) {
    let n = 0;
    for (const [route, c] of Object.entries(routes)) if (!/embed/i.test(route)) n += c;
    if (n) out[provider] = n;
  }
  return out;
}

export const totalChatCalls = (g: TestGateway) => Object.values(simChatCalls(g)).reduce((a, b) => a + b, 0);

/** Polls until `probe` holds or `ms` pass. */
export async function eventually(probe: () => Promise<boolean> | boolean, ms = 3000, every = 20): Promise<boolean> {
  const end = performance.now() + ms;
  for (;;) {
    if (await probe()) return true;
    if (performance.now() > end) return false;
    await Bun.sleep(every);
  }
}

/**
 * A recording reverse proxy in front of the simulator. Start it before the gateway, point a
 * provider's `<NAME>_BASE_URL` at `proxy.url`, then aim it at the simulator once the gateway
 * (and its simulator) exist. Request bodies are recorded; responses are streamed through.
 */
export interface ProxiedCall {
  path: string;
  body: any;
  /** The request body's bytes as text, as the gateway sent them. */
  raw: string;
  authorization: string | null;
  /** The W3C trace context the gateway sent (tracing on). */
  traceparent: string | null;
  /** The client's `anthropic-beta` header as the gateway passed it on (null: none). */
  anthropicBeta: string | null;
  /** The upstream's response bytes as text, filled in as they pass. */
  response: string;
  /** Set when the gateway hung up on this request before its response ended. */
  aborted: boolean;
  /** Resolves when the response has fully passed (or broke off). */
  ended: Promise<void>;
}

export class RecordingProxy {
  readonly bodies: ProxiedCall[] = [];
  /**
   * Rewrites each SSE event of a streamed answer before it goes on (one event in, the events
   * out), e.g. to split a vendor's deltas finer than the simulator does; null: as it came.
   */
  reshape: ((event: string) => string[]) | null = null;
  /** With `reshape`: the reshaped stream leaves in network writes of this many bytes, a pause between. */
  pieceBytes = 0;
  private target = "";
  private server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    idleTimeout: 60,
    fetch: async (req) => {
      const url = new URL(req.url);
      const text = await req.text();
      let body: any = text;
      try {
        body = JSON.parse(text);
      } catch {}
      let end!: () => void;
      const call: ProxiedCall = {
        path: url.pathname,
        body,
        raw: text,
        authorization: req.headers.get("authorization"),
        traceparent: req.headers.get("traceparent"),
        anthropicBeta: req.headers.get("anthropic-beta"),
        response: "",
        aborted: false,
        ended: new Promise((r) => (end = r)),
      };
      this.bodies.push(call);
      req.signal.addEventListener("abort", () => (call.aborted = true));
      const headers = new Headers(req.headers);
      headers.delete("host");
      headers.delete("content-length");
      const res = await fetch(this.target + url.pathname + url.search, {
        method: req.method,
        headers,
        body: text,
        signal: req.signal,
      });
      const out = new Headers(res.headers);
      out.delete("content-encoding");
      out.delete("content-length");
      const dec = new TextDecoder();
      const enc = new TextEncoder();
      const reshape = this.reshape;
      const pieceBytes = this.pieceBytes;
      let pending = "";
      const tap = new TransformStream<Uint8Array, Uint8Array>({
        async transform(chunk, controller) {
          if (!reshape || !(res.headers.get("content-type") ?? "").includes("event-stream")) {
            call.response += dec.decode(chunk, { stream: true });
            controller.enqueue(chunk);
            return;
          }
          pending += dec.decode(chunk, { stream: true });
          const cut = pending.lastIndexOf("\n\n");
          if (cut < 0) return;
          const events = pending.slice(0, cut + 2).split(/(?<=\n\n)/);
          pending = pending.slice(cut + 2);
          const out = events.flatMap((e) => reshape(e)).join("");
          call.response += out;
          const bytes = enc.encode(out);
          const step = pieceBytes > 0 ? pieceBytes : bytes.length;
          for (let i = 0; i < bytes.length; i += step) {
            controller.enqueue(bytes.slice(i, i + step));
            if (pieceBytes > 0) await Bun.sleep(1);
          }
        },
        flush(controller) {
          if (pending) {
            call.response += pending;
            controller.enqueue(enc.encode(pending));
          }
          end();
        },
      });
      res.body!.pipeTo(tap.writable).catch(() => end());
      return new Response(tap.readable, { status: res.status, headers: out });
    },
  });

  get url(): string {
    return `http://127.0.0.1:${this.server.port}`;
  }

  aim(target: string): void {
    this.target = target;
  }

  chatBodies(): any[] {
    return this.bodies.filter((b) => !b.path.includes("/embeddings")).map((b) => b.body);
  }

  clear(): void {
    this.bodies.length = 0;
  }

  stop(): void {
    this.server.stop(true);
  }
}

/** The value of a 402/4xx structured error body. */
export const errorCode = (body: any) => body?.detail?.error;

/**
 * A gateway whose calls to `providers` pass through one recording proxy
 * (`<PROVIDER>_BASE_URL = proxy/<provider>`, forwarded to the simulator's `/sim/<provider>`);
 * the other providers talk to the simulator directly.
 */
export async function proxiedGateway(
  providers: string[],
  env: Record<string, string> = {},
  db: "pg" | "pglite" = "pglite",
): Promise<{ g: TestGateway; proxy: RecordingProxy }> {
  const { startTestGateway } = await import("../harness");
  const proxy = new RecordingProxy();
  const bases = Object.fromEntries(providers.map((p) => [`${p.toUpperCase()}_BASE_URL`, `${proxy.url}/${p}`]));
  const g = await startTestGateway({ db, env: { ...bases, ...env } });
  proxy.aim(`${g.gw.sim!.url}/sim`);
  return { g, proxy };
}

/** A routing parent's candidates, in routing order, as the shipped catalog lists them. */
export function candidates(parent: string): string[] {
  const models = (shippedCatalog as { models: { id: string; candidates?: string[] }[] }).models;
  return models.find((m) => m.id === parent)!.candidates!;
}
