/**
 * Who reads activity: a dashboard JWT sees the whole account; an API key with `usage:read`
 * sees only its own calls (a key cannot read its siblings' prompts' metadata).
 */
import type { Server } from "bun";
import { API_KEY_PREFIX } from "../../core/auth/principal";
import { bearer } from "../auth";
import { authenticateKey } from "../api-key-auth";
import type { AppDeps } from "../deps";

export interface ActivityReader {
  userId: string;
  /** Set for an API key: its own calls only. */
  keyId?: string;
}

export async function activityReader(
  deps: AppDeps,
  request: Request,
  server: Server<unknown> | null,
  headers: Record<string, unknown>,
): Promise<ActivityReader> {
  if (bearer(request)?.startsWith(API_KEY_PREFIX)) {
    const { principal } = await authenticateKey(deps.auth, request, { server, need: "usage:read", headers });
    await deps.auth.settled(principal.user.id);
    return { userId: principal.user.id, keyId: principal.keyId };
  }
  return { userId: (await deps.auth.jwtUser(request)).id };
}
