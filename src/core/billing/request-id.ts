/**
 * Ledger ids of calls a client named (X-Request-Id). The hold, the charge and the usage event
 * of a call carry one id, unique across the whole database; a client's own id is only unique
 * within its account. So the ledger id of such a call is a name-based UUID (RFC 4122 version
 * 5) of the account and the client's id: the same account reusing an id meets its own earlier
 * hold (409), another account using the same id gets an id of its own and is not affected.
 * Ids the gateway chooses are random (version 4) and are used as they are; a version-5 id
 * never equals one of them, so a client cannot name a call into another call's ledger rows.
 */
import { createHash } from "node:crypto";

/** This gateway's namespace for account-scoped request ids (a fixed random UUID). */
const NAMESPACE = Buffer.from("084014c897e44b858a9b8c76725cab4a", "hex");

export function accountRequestId(userId: string, clientId: string): string {
  const h = createHash("sha1").update(NAMESPACE).update(`${userId}:${clientId.toLowerCase()}`).digest();
  h[6] = (h[6]! & 0x0f) | 0x50;
  h[8] = (h[8]! & 0x3f) | 0x80;
  const x = h.subarray(0, 16).toString("hex");
  return `${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20)}`;
}
