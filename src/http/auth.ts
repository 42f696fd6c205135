/**
 * Authentication for the four credential kinds of the specification: API keys (model calls),
 * dashboard JWTs (keys, policies, feedback), management keys (provisioning) and the admin
 * token (operator endpoints). Each check throws a GatewayError; handlers just call them.
 */
import { requestRecord, type RequestRecord } from "./request-log";
import type { Server } from "bun";
import { createHash, timingSafeEqual } from "node:crypto";
import { GatewayError, text, type Text } from "../core/errors";
import {
  API_KEY_PREFIX,
  MGMT_KEY_PREFIX,
  type KeyPrincipal,
  type MgmtPrincipal,
  type Scope,
} from "../core/auth/principal";
import type { KeyCache } from "../core/auth/key-cache";
import type { KeyRepo } from "../db/repos/keys";
import type { UserRepo, UserRow } from "../db/repos/users";
import type { SessionRepo } from "../db/repos/sessions";
import { cidrContains, ipAllowed, parseCidr, parseIp, type Cidr } from "../lib/cidr";
import { verifyJwt } from "../lib/jwt";
import { sha256Hex } from "../lib/secrets";
import type { RateDecision, RateLimiter } from "../lib/rate-limit/types";
import type { AuthThrottle } from "./auth-throttle";

export interface AuthDeps {
  keys: KeyRepo;
  users: UserRepo;
  cache: KeyCache;
  limiter: RateLimiter;
  jwtSecret: string;
  /** Console sessions: an access token naming one (`sid`) stops working when it is signed out. */
  sessions?: SessionRepo;
  adminToken: string | null;
  /** The token GET /metrics takes (METRICS_TOKEN); null or absent: the admin token. */
  metricsToken?: string | null;
  rateLimitRpm: number;
  /** Requests per account (all its keys) per minute, on top of the per-key limit (0 or absent = off). */
  accountRateLimitRpm?: number;
  trustedProxies: string;
  /** Invalid keys per client address (null: not throttled). */
  throttle?: AuthThrottle | null;
  /** Resolves once the account's settles still behind their answers have landed (read-your-writes). */
  settled?: (userId: string) => Promise<void>;
}

/** A type, not an interface: Elysia's `resolve` takes only what has an index signature. */
export type ApiKeyAuth = {
  principal: KeyPrincipal;
  /** The rate-limit counters (empty when no limit is configured), also set on the answer. */
  rateLimitHeaders: Record<string, string>;
};

/** Headers of an answer under no rate limit: shared, never written to. */
const NO_RATE_HEADERS: Record<string, string> = Object.freeze({}) as Record<string, string>;

const unauthorized = (msg?: Text) => new GatewayError("unauthorized", msg);

/** Whatever the limiter's store said, the client gets the specification's 503 `limiter_unavailable`. */
const limiterUnavailable = (): never => {
  throw new GatewayError("limiter_unavailable");
};

// Regular expressions live at module level: a literal in a function is a new object per call.
const BEARER = /^Bearer\s+(\S+)\s*$/i;

export function bearer(request: Request): string | null {
  const h = request.headers.get("authorization");
  if (!h) return null;
  const m = BEARER.exec(h);
  return m ? m[1]! : null;
}

export class Authenticator {
  private trusted: Cidr[];
  /**
   * Each request's authentication outcomes, by credential kind: a route's credential is
   * checked from the headers before its body is read (./security.ts) and again by the
   * handler, which gets the same outcome without a second lookup.
   */
  private outcomes = new WeakMap<Request, Record<string, Promise<unknown>>>();
  /** Each request's client address (clientIp). */
  private ips = new WeakMap<Request, string>();
  constructor(private deps: AuthDeps) {
    this.trusted = deps.trustedProxies
      .split(",")
      .map((s) => s.trim())
      .filter(Boolean)
      .map((s) => parseCidr(s)!)
      .filter(Boolean);
  }

  /** The client address: the socket peer, or X-Forwarded-For when the peer is a trusted proxy. */
  clientIp(request: Request, server: Server<unknown> | null): string {
    // Asked by the request log, the key check and the throttles: the socket is asked once.
    let ip = this.ips.get(request);
    if (ip === undefined) this.ips.set(request, (ip = this.findClientIp(request, server)));
    return ip;
  }

  private findClientIp(request: Request, server: Server<unknown> | null): string {
    const peer = server?.requestIP(request)?.address ?? "";
    if (!this.trusted.length || !this.isTrusted(peer)) return peer;
    const hops = (request.headers.get("x-forwarded-for") ?? "")
      .split(",")
      .map((s) => s.trim())
      .filter(Boolean);
    for (let i = hops.length - 1; i >= 0; i--) if (!this.isTrusted(hops[i]!)) return hops[i]!;
    return hops[0] ?? peer;
  }

  /** Whether the request came from a proxy named in TRUSTED_PROXIES (whose X-Forwarded-* are believed). */
  fromTrustedProxy(request: Request, server: Server<unknown> | null): boolean {
    return this.trusted.length > 0 && this.isTrusted(server?.requestIP(request)?.address ?? "");
  }

  private isTrusted(ip: string): boolean {
    const v = parseIp(ip);
    return v !== null && this.trusted.some((c) => cidrContains(c, v));
  }

  private once<T>(request: Request, kind: string, check: () => Promise<T>): Promise<T> {
    let byKind = this.outcomes.get(request);
    // A plain object, not a Map: a request is checked for one or two kinds.
    if (!byKind) this.outcomes.set(request, (byKind = {}));
    return (byKind[kind] ??= observed(request, check)) as Promise<T>;
  }

  /**
   * Resolves a key from cache or database. With the caller's address, a key this instance has
   * not verified is looked up only while that address is under its invalid-key limit (429).
   */
  private async lookupHash(hash: string, ip?: string): Promise<KeyPrincipal | null> {
    const cached = this.deps.cache.get(hash);
    if (cached) return cached;
    if (ip !== undefined) await this.deps.throttle?.keyLookup(ip);
    if (cached === null) return null;
    const p = await this.deps.keys.principalByHash(hash);
    this.deps.cache.set(hash, p);
    return p;
  }

  /**
   * API-key authentication with everything the specification enforces at every key
   * authentication point: validity (401), IP allowlist (403), scope (403), rate limit (429).
   */
  /**
   * The API key's whole check for `need`: the key (keyPrincipal), its scope, its rate limits.
   * The counters are added to `headers` (the answer's) when given. One async call per request.
   */
  async apiKey(
    request: Request,
    server: Server<unknown> | null,
    need: Scope | "model" | "any",
    headers?: Record<string, unknown>,
  ): Promise<ApiKeyAuth> {
    const p = await this.keyPrincipal(request, server);
    checkScope(p, need);
    // Keys are cheap: the account's keys together share one more window. Both windows are
    // asked at once (one round trip with Redis); a call refused by one may still count in the
    // other, which only costs the caller's own account.
    const perKey = this.deps.rateLimitRpm;
    const perAccount = this.deps.accountRateLimitRpm ?? 0;
    // Without the account window (the default) the key's is awaited alone: no array, no Promise.all.
    let key: RateDecision | null = null;
    let acct: RateDecision | null = null;
    if (perAccount > 0)
      [key, acct] = await Promise.all([
        perKey > 0 ? this.hit(p.keyId, perKey) : null,
        this.hit(`acct:${p.user.id}`, perAccount),
      ]);
    else if (perKey > 0) {
      // Awaited here, not through hit()'s catch: one promise less on every call.
      try {
        key = await this.deps.limiter.hit(p.keyId, perKey);
      } catch {
        limiterUnavailable();
      }
    }
    if (key && !key.allowed)
      throw new GatewayError("rate_limited", undefined, { retryAfter: key.resetSeconds, headers: rateHeaders(key) });
    if (acct && !acct.allowed)
      throw new GatewayError(
        "rate_limited",
        text(
          `계정의 요청 한도(분당 ${perAccount}회, 모든 키 합계)를 초과했습니다. 잠시 후 다시 시도하세요.`,
          `The account's rate limit (${perAccount} requests a minute across all its keys) is exceeded. Try again shortly.`,
        ),
        { retryAfter: acct.resetSeconds, headers: rateHeaders(acct) },
      );
    const rate = key ?? acct;
    const rateLimitHeaders = rate ? rateHeaders(rate) : NO_RATE_HEADERS;
    if (headers && rate) Object.assign(headers, rateLimitHeaders);
    return { principal: p, rateLimitHeaders };
  }

  private hit(key: string, limit: number): Promise<RateDecision> {
    try {
      return this.deps.limiter.hit(key, limit).catch(limiterUnavailable);
    } catch {
      return Promise.reject(new GatewayError("limiter_unavailable"));
    }
  }

  /**
   * Who the API key's holder is, from the headers alone: a valid, active, unexpired key of a
   * live account (401), called from an allowed address (403). Scope and rate limit are the
   * handler's (apiKey).
   */
  keyPrincipal(request: Request, server: Server<unknown> | null): Promise<KeyPrincipal> {
    // Asked twice per request (before the body, then by the route): the second finds the first's outcome.
    let byKind = this.outcomes.get(request);
    const known = byKind?.apiKey as Promise<KeyPrincipal> | undefined;
    if (known) return known;
    // Anthropic's clients send the key as `x-api-key` (ANTHROPIC_API_KEY); the bearer wins when both come.
    const secret = bearer(request) ?? (request.headers.get("x-api-key")?.trim() || null);
    const hash = secret?.startsWith(API_KEY_PREFIX) ? sha256Hex(secret) : null;
    const rec = requestRecord(request);
    // The usual case, a valid key verified before and called from an allowed address, is
    // answered from the cache with a settled promise: no async call, no closure. (Traced
    // requests take the checked path, which times the authorize phase.)
    const traced = rec?.traced === true;
    const cached = hash && !traced ? this.deps.cache.get(hash) : undefined;
    if (!byKind) this.outcomes.set(request, (byKind = {}));
    if (cached && !whyInvalid(cached)) {
      const ip = this.clientIp(request, server);
      if (!cached.ipAllowlist || ipAllowed(ip, cached.ipAllowlist)) {
        rec?.caller(cached.user.id, cached.keyId);
        return (byKind.apiKey = Promise.resolve(cached)) as Promise<KeyPrincipal>;
      }
    }
    // Any other key is checked in full; untraced, without observed()'s async layer (a refused
    // key's error then passes one frame less on its way to the client).
    return (byKind.apiKey = traced
      ? observed(request, () => this.checkKey(request, server, hash, undefined))
      : this.checkKey(request, server, hash, rec)) as Promise<KeyPrincipal>;
  }

  /** The key's full check (keyPrincipal): looked up, throttled per address when invalid; names the caller in `rec`. */
  private async checkKey(
    request: Request,
    server: Server<unknown> | null,
    hash: string | null,
    rec: RequestRecord | undefined,
  ): Promise<KeyPrincipal> {
    if (!hash) throw unauthorized(text("유효한 API 키가 필요합니다.", "A valid API key is required."));
    const ip = this.clientIp(request, server);
    const p = await this.lookupHash(hash, ip);
    const invalid = whyInvalid(p);
    if (!p || invalid) {
      // Every invalid key counts against the address (guessing finds deleted or expired ones too).
      await this.deps.throttle?.keyFailed(ip);
      throw unauthorized(invalid ?? undefined);
    }
    if (p.ipAllowlist && !ipAllowed(ip, p.ipAllowlist)) throw new GatewayError("ip_not_allowed");
    rec?.caller(p.user.id, p.keyId);
    return p;
  }

  /** Waits until the account's own recent calls are in its balances (settles landed, leased room back). */
  async settled(userId: string): Promise<void> {
    await this.deps.settled?.(userId);
  }

  /** Dashboard JWT → a live account. API keys and management keys are refused (401). */
  jwtUser(request: Request): Promise<UserRow> {
    return this.once(request, "jwt", () => this.checkJwt(request));
  }

  private async checkJwt(request: Request): Promise<UserRow> {
    const token = bearer(request);
    if (!token || token.startsWith(API_KEY_PREFIX) || token.startsWith(MGMT_KEY_PREFIX))
      throw unauthorized(text("대시보드 로그인 토큰(JWT)이 필요합니다.", "A dashboard login token (JWT) is required."));
    const claims = verifyJwt(token, this.deps.jwtSecret);
    if (!claims || claims.typ !== "access")
      throw unauthorized(
        text("로그인 토큰이 올바르지 않거나 만료되었습니다.", "The login token is invalid or expired."),
      );
    // A console session's token ends with its session (sign-out, reuse of a rotated refresh token).
    if (typeof claims.sid === "string" && !(await this.deps.sessions?.live(claims.sid)))
      throw unauthorized(text("로그아웃된 세션의 토큰입니다.", "The session of this token was signed out."));
    // The dashboard shows balances and usage: the account's own recent calls are in them.
    await this.deps.settled?.(claims.sub);
    const user = await this.deps.users.live(claims.sub);
    if (!user)
      throw unauthorized(text("삭제되었거나 존재하지 않는 계정입니다.", "The account was deleted or does not exist."));
    return user;
  }

  /** Management key (provisioning endpoints). A JWT or API key is refused (401). */
  mgmtKey(request: Request, server: Server<unknown> | null = null): Promise<MgmtPrincipal> {
    return this.once(request, "mgmt", () => this.checkMgmtKey(request, server));
  }

  private async checkMgmtKey(request: Request, server: Server<unknown> | null): Promise<MgmtPrincipal> {
    const secret = bearer(request);
    if (!secret || !secret.startsWith(MGMT_KEY_PREFIX))
      throw unauthorized(text("관리 키가 필요합니다.", "A management key is required."));
    const ip = this.clientIp(request, server);
    await this.deps.throttle?.keyLookup(ip);
    const m = await this.deps.keys.mgmtByHash(sha256Hex(secret));
    if (!m) {
      await this.deps.throttle?.keyFailed(ip);
      throw unauthorized(
        text("관리 키가 올바르지 않거나 삭제되었습니다.", "The management key is invalid or deleted."),
      );
    }
    await this.deps.settled?.(m.userId);
    return { mgmtKeyId: m.id, userId: m.userId };
  }

  /**
   * Operator token. Admin endpoints do not exist (404) when no token is configured. Wrong
   * tokens count per client address; past the limit that address gets 429 before any compare.
   */
  admin(request: Request, server: Server<unknown> | null = null): Promise<void> {
    return this.once(request, "admin", () => this.checkAdmin(request, server));
  }

  /**
   * The scraper's token for /metrics: METRICS_TOKEN, or the admin token when that is unset (404
   * when neither is). Wrong tokens count with the wrong admin tokens of the address.
   */
  metrics(request: Request, server: Server<unknown> | null = null): Promise<void> {
    return this.once(request, "metrics", async () => {
      const want = this.deps.metricsToken ?? this.deps.adminToken;
      if (!want)
        throw new GatewayError(
          "not_found",
          text("요청한 경로를 찾을 수 없습니다.", "The requested path was not found."),
        );
      const ip = this.clientIp(request, server);
      await this.deps.throttle?.adminLookup(ip);
      if (!tokenEquals(bearer(request), want)) {
        await this.deps.throttle?.adminFailed(ip);
        throw unauthorized(text("메트릭 토큰이 올바르지 않습니다.", "The metrics token is invalid."));
      }
    });
  }

  private async checkAdmin(request: Request, server: Server<unknown> | null): Promise<void> {
    if (!this.deps.adminToken)
      throw new GatewayError("not_found", text("요청한 경로를 찾을 수 없습니다.", "The requested path was not found."));
    const ip = this.clientIp(request, server);
    await this.deps.throttle?.adminLookup(ip);
    if (!tokenEquals(bearer(request), this.deps.adminToken)) {
      await this.deps.throttle?.adminFailed(ip);
      throw unauthorized(text("관리자 토큰이 올바르지 않습니다.", "The admin token is invalid."));
    }
  }
}

/**
 * Digests of equal length, compared in constant time: neither the token's content nor its
 * length shows in the timing.
 */
export function tokenEquals(given: string | null, want: string): boolean {
  const a = createHash("sha256")
    .update(given ?? "")
    .digest();
  const b = createHash("sha256").update(want).digest();
  return timingSafeEqual(a, b);
}

/**
 * Runs one authentication as the request's `authorize` phase and names the caller it found
 * (account and key ids, never a secret) in the request's log line.
 */
async function observed<T>(request: Request, check: () => Promise<T>): Promise<T> {
  const rec = requestRecord(request);
  if (!rec) return check();
  const end = rec.phase("authorize");
  try {
    const who = await check();
    const w = who as
      | { keyId?: string; mgmtKeyId?: string; userId?: string; user?: { id: string }; id?: string }
      | undefined;
    if (w?.keyId && w.user) rec.caller(w.user.id, w.keyId);
    else if (w?.mgmtKeyId && w.userId) rec.caller(w.userId, w.mgmtKeyId);
    else if (w?.id) rec.caller(w.id);
    end();
    return who;
  } catch (e) {
    end(e instanceof GatewayError ? e.errorCode : "error");
    throw e;
  }
}

/** Why a looked-up key may not authenticate (the 401 message), or null when it may. */
function whyInvalid(p: KeyPrincipal | null): Text | null {
  if (!p || p.deleted || p.user.deleted)
    return text("API 키가 올바르지 않거나 삭제되었습니다.", "The API key is invalid or deleted.");
  if (!p.isActive) return text("비활성화된 API 키입니다.", "The API key is disabled.");
  if (p.expiresAt && p.expiresAt.getTime() <= Date.now())
    return text("만료된 API 키입니다.", "The API key has expired.");
  return null;
}

function checkScope(p: KeyPrincipal, need: Scope | "model" | "any"): void {
  if (need === "any") return;
  const want: Scope = need === "model" ? "chat" : need;
  // null scopes: the legacy behaviour, "model calls only" in the specification.
  const granted = p.scopes ?? ["chat"];
  if (!granted.includes(want))
    throw new GatewayError(
      "scope_required",
      text(`이 키에는 '${want}' 권한이 없습니다.`, `This key lacks the '${want}' scope.`),
    );
}

export function rateHeaders(r: RateDecision): Record<string, string> {
  return {
    "x-ratelimit-limit": String(r.limit),
    "x-ratelimit-remaining": String(r.remaining),
    "x-ratelimit-reset": String(r.resetSeconds),
  };
}
