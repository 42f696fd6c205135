/**
 * Console sessions: refresh-token families with rotation and reuse detection (docs/console.md,
 * "Sessions"). A token is `<session id>.<secret>`; the row keeps the SHA-256 of the current
 * secret only. A refresh swaps the stored hash in one conditional UPDATE, so of two uses of the
 * same token exactly one wins; a secret of a live family that is not the current one is a
 * rotated token used again (or a forged one) and revokes the whole family.
 */
import { randomBytes } from "node:crypto";
import type { Database } from "../client";
import { sha256Hex } from "../../lib/secrets";

export interface SessionLimits {
  /** Unused this long, a session ends (each refresh moves it on). */
  idleSeconds: number;
  /** A sign-in lasts at most this long, however often it is refreshed. */
  maxSeconds: number;
}

export interface IssuedSession {
  id: string;
  userId: string;
  /** The refresh token to set as the cookie; never stored. */
  token: string;
  /** When the session ends at the latest (the cookie's lifetime). */
  expiresAt: Date;
}

export type RefreshOutcome =
  | { ok: true; session: IssuedSession }
  | { ok: false; why: "malformed" | "unknown" | "ended" | "reuse" };

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** `<id>.<secret>` split, or null when it is not one of ours. */
export function parseRefreshToken(token: string): { id: string; secret: string } | null {
  const dot = token.indexOf(".");
  const id = token.slice(0, dot);
  const secret = token.slice(dot + 1);
  if (dot < 0 || !UUID.test(id) || !/^[A-Za-z0-9_-]{43}$/.test(secret)) return null;
  return { id, secret };
}

const newSecret = () => randomBytes(32).toString("base64url");

export class SessionRepo {
  constructor(
    private db: Database,
    private limits: SessionLimits,
  ) {}

  /** A new family for a sign-in; the account's ended families are deleted on the way. */
  async start(userId: string): Promise<IssuedSession> {
    await this.db.query(
      `delete from console_sessions where user_id = $1
         and (revoked_at is not null or expires_at <= now() or idle_expires_at <= now())`,
      [userId],
    );
    const id = crypto.randomUUID();
    const secret = newSecret();
    const [row] = await this.db.query<{ expires_at: Date | string }>(
      `insert into console_sessions (id, user_id, token_hash, idle_expires_at, expires_at)
       values ($1, $2, $3, now() + make_interval(secs => $4), now() + make_interval(secs => $5))
       returning expires_at`,
      [
        id,
        userId,
        sha256Hex(secret),
        Math.min(this.limits.idleSeconds, this.limits.maxSeconds),
        this.limits.maxSeconds,
      ],
    );
    return { id, userId, token: `${id}.${secret}`, expiresAt: new Date(row!.expires_at) };
  }

  /** Rotates a refresh token: the next token of its family, or why not (a reused one revokes the family). */
  async refresh(token: string): Promise<RefreshOutcome> {
    const t = parseRefreshToken(token);
    if (!t) return { ok: false, why: "malformed" };
    const secret = newSecret();
    const [row] = await this.db.query<{ user_id: string; expires_at: Date | string }>(
      `update console_sessions
          set token_hash = $3, rotations = rotations + 1, refreshed_at = now(),
              idle_expires_at = least(now() + make_interval(secs => $4), expires_at)
        where id = $1 and token_hash = $2 and revoked_at is null
          and expires_at > now() and idle_expires_at > now()
        returning user_id, expires_at`,
      [t.id, sha256Hex(t.secret), sha256Hex(secret), this.limits.idleSeconds],
    );
    if (row)
      return {
        ok: true,
        session: { id: t.id, userId: row.user_id, token: `${t.id}.${secret}`, expiresAt: new Date(row.expires_at) },
      };
    // Not rotated: an unknown family, an ended one, or a secret that is no longer (or never was) current.
    const revoked = await this.db.query(
      `update console_sessions set revoked_at = now(), revoked_reason = 'reuse'
        where id = $1 and token_hash <> $2 and revoked_at is null returning id`,
      [t.id, sha256Hex(t.secret)],
    );
    if (revoked.length) return { ok: false, why: "reuse" };
    const [known] = await this.db.query(`select 1 from console_sessions where id = $1`, [t.id]);
    return { ok: false, why: known ? "ended" : "unknown" };
  }

  /** Ends a family (sign-out, or its account is gone). True when it was live. */
  async revoke(id: string, reason: "sign_out" | "account_gone"): Promise<boolean> {
    if (!UUID.test(id)) return false;
    const rows = await this.db.query(
      `update console_sessions set revoked_at = now(), revoked_reason = $2
        where id = $1 and revoked_at is null returning id`,
      [id, reason],
    );
    return rows.length > 0;
  }

  /** Whether the family an access token was issued under is still live (sign-out ends its tokens at once). */
  async live(id: string): Promise<boolean> {
    if (!UUID.test(id)) return false;
    const rows = await this.db.query(
      `select 1 from console_sessions where id = $1 and revoked_at is null and expires_at > now()`,
      [id],
    );
    return rows.length > 0;
  }
}
