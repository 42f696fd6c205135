/**
 * Throttles on authentication, so credentials cannot be guessed or accounts mass-created at
 * wire speed: sign-ups and login attempts per client address, failed logins per email, and
 * invalid API / management keys per address. Counts live in the request limiter: Redis when
 * REDIS_URL is set (every instance shares them), in-process otherwise. Sliding windows; an
 * over-limit attempt is refused with 429 `rate_limited` and Retry-After before any password
 * hash or database lookup runs, and for sign-up and login before their body is read (the
 * body parser calls `beforeBody`; the handlers' own calls then count nothing twice). Wrong admin
 * tokens count per address too. A limiter failure is 503 `limiter_unavailable`, never a free pass.
 */
import { GatewayError, text, type Text } from "../core/errors";
import type { RateDecision, RateLimiter } from "../lib/rate-limit/types";
import { sha256Hex } from "../lib/secrets";

const MINUTE = 60_000;
const HOUR = 3_600_000;

export interface ThrottleLimits {
  /** Sign-ups per client address per hour (0 = off). */
  signupsPerIp: number;
  /** Login attempts per client address per minute (0 = off). */
  loginsPerIp: number;
  /** Failed logins per email per hour (0 = off). */
  loginFailuresPerEmail: number;
  /** Invalid keys per client address per minute (0 = off). */
  invalidKeysPerIp: number;
  /** Wrong admin tokens per client address per minute (0 = off). */
  adminFailuresPerIp?: number;
}

/** The public routes that take a body, and the throttle each is counted in before reading it. */
const BEFORE_BODY: Record<string, "signup" | "login"> = {
  "POST /v1/auth/signup": "signup",
  "POST /v1/auth/login": "login",
};

export class AuthThrottle {
  /** Requests already counted (before their body), so the handler's call counts nothing twice. */
  private counted = new WeakSet<Request>();
  constructor(
    private limiter: RateLimiter,
    private l: ThrottleLimits,
  ) {}

  /** Before a public route's body is read: counts the attempt of `route` (429 past its limit). */
  async beforeBody(request: Request, route: string, ip: string): Promise<void> {
    const kind = BEFORE_BODY[`${request.method} ${route}`];
    if (kind === "signup") await this.signup(ip, request);
    else if (kind === "login") await this.loginAttempt(ip, request);
  }

  /** Counts a sign-up from `ip` (once per request); 429 past the limit. */
  async signup(ip: string, request?: Request): Promise<void> {
    if (request && this.once(request)) return;
    await this.check(
      "hit",
      `auth:signup:${ip}`,
      this.l.signupsPerIp,
      HOUR,
      text("가입 요청이 너무 많습니다. 잠시 후 다시 시도하세요.", "Too many sign-ups. Try again shortly."),
    );
  }

  /** Counts a login attempt from `ip` and refuses an email with too many recent failures. */
  async login(ip: string, email: string, request?: Request): Promise<void> {
    await this.loginAttempt(ip, request);
    await this.loginEmail(email);
  }

  /** Counts a login attempt from `ip` (once per request); 429 past the limit. */
  async loginAttempt(ip: string, request?: Request): Promise<void> {
    if (request && this.once(request)) return;
    await this.check(
      "hit",
      `auth:login:${ip}`,
      this.l.loginsPerIp,
      MINUTE,
      text("로그인 시도가 너무 많습니다. 잠시 후 다시 시도하세요.", "Too many login attempts. Try again shortly."),
    );
  }

  /** Refuses an email with too many recent failed logins (429). */
  async loginEmail(email: string): Promise<void> {
    await this.check(
      "peek",
      emailKey(email),
      this.l.loginFailuresPerEmail,
      HOUR,
      text(
        "이 계정의 로그인 실패가 너무 많습니다. 잠시 후 다시 시도하세요.",
        "Too many failed logins for this account. Try again shortly.",
      ),
    );
  }

  /** Counts a failed login for `email`. */
  async loginFailed(email: string): Promise<void> {
    await this.check("hit", emailKey(email), this.l.loginFailuresPerEmail, HOUR, null);
  }

  /** Before a key lookup the database would answer: 429 when `ip` sent too many invalid keys. */
  async keyLookup(ip: string): Promise<void> {
    await this.check(
      "peek",
      `auth:badkey:${ip}`,
      this.l.invalidKeysPerIp,
      MINUTE,
      text(
        "올바르지 않은 키로 보낸 요청이 너무 많습니다. 잠시 후 다시 시도하세요.",
        "Too many requests with invalid keys. Try again shortly.",
      ),
    );
  }

  /** Counts an invalid key from `ip`. */
  async keyFailed(ip: string): Promise<void> {
    await this.check("hit", `auth:badkey:${ip}`, this.l.invalidKeysPerIp, MINUTE, null);
  }

  /** Before the admin token is compared: 429 when `ip` sent too many wrong ones. */
  async adminLookup(ip: string): Promise<void> {
    await this.check(
      "peek",
      `auth:badadmin:${ip}`,
      this.l.adminFailuresPerIp ?? 0,
      MINUTE,
      text(
        "올바르지 않은 관리자 토큰으로 보낸 요청이 너무 많습니다. 잠시 후 다시 시도하세요.",
        "Too many requests with a wrong admin token. Try again shortly.",
      ),
    );
  }

  /** Counts a wrong admin token from `ip`. */
  async adminFailed(ip: string): Promise<void> {
    await this.check("hit", `auth:badadmin:${ip}`, this.l.adminFailuresPerIp ?? 0, MINUTE, null);
  }

  /** True when `request` was counted already; marks it counted otherwise. */
  private once(request: Request): boolean {
    if (this.counted.has(request)) return true;
    this.counted.add(request);
    return false;
  }

  /** `refusal` null: only count (the attempt already failed on its own). */
  private async check(
    op: "hit" | "peek",
    key: string,
    limit: number,
    windowMs: number,
    refusal: Text | null,
  ): Promise<void> {
    if (limit <= 0) return;
    let d: RateDecision;
    try {
      d = await this.limiter[op](key, limit, windowMs);
    } catch {
      throw new GatewayError("limiter_unavailable");
    }
    if (!d.allowed && refusal) throw new GatewayError("rate_limited", refusal, { retryAfter: d.resetSeconds });
  }
}

// Hashed: the shared limiter (Redis) never holds an email address.
const emailKey = (email: string) => `auth:loginfail:${sha256Hex(email)}`;
