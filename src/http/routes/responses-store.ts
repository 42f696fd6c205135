/**
 * Stored responses (RESPONSES_STORE=on): `GET /v1/responses/{id}` and `DELETE
 * /v1/responses/{id}` in OpenAI's shapes, and the wiring the create route uses to resolve
 * earlier turns and keep its answer. A response belongs to the key that made it, as that key's
 * activity does (docs/activity.md): only that key reads, deletes or continues it; every other
 * key, of its account too (a child key, a `usage:read` key), gets 404.
 */
import { Elysia } from "elysia";
import type { SaveOutcome, StoredResponseRepo } from "../../db/repos/stored-responses";
import { log } from "../../lib/log";
import { notStored, type ResponseHistory } from "../../surfaces/responses/history";
import type { ResponsesBody } from "../../surfaces/responses/schema";
import { apiKeyAuth } from "../api-key-auth";
import type { AppDeps } from "../deps";
import { ok } from "../openapi/describe";
import { DeletedResponse, ResponseObject } from "../../surfaces/responses/schemas";
import { deletedResponse } from "../../surfaces/responses/from-core";
import { AUTH } from "../security";

export interface ResponseStore {
  repo: StoredResponseRepo;
  /** RESPONSES_STORE: off, nothing is kept or resolved (reads and deletes of older rows still work). */
  on: boolean;
}

/** Who owns stored responses: the key that made them, within its account. */
export interface StoreOwner {
  userId: string;
  keyId: string;
}

/** The key's stored history, or null with storage off. */
export function historyOf(store: ResponseStore, o: StoreOwner): ResponseHistory | null {
  return store.on
    ? {
        chain: (id) => store.repo.chain(o.userId, o.keyId, id),
        items: (ids) => store.repo.items(o.userId, o.keyId, ids),
      }
    : null;
}

/** Whether this request's answer is kept: storage on and the request did not say `store: false`. */
export function keeps(store: ResponseStore, body: ResponsesBody): boolean {
  return store.on && body.store !== false;
}

/** The header saying a response asked to be kept was not, and why. */
export const NOT_STORED_HEADER = "x-response-stored";

/** The header's value for a save's outcome; null when it was kept. */
export function notStoredValue(outcome: SaveOutcome | "failed"): string | null {
  return outcome === "stored" ? null : `false; reason=${outcome}`;
}

/**
 * Keeps an answered response with the items that led to it, within the account's quota and
 * the size of one response (SaveOutcome). A failure is logged, not thrown: the call was
 * answered and charged, and only a later turn that names it will miss it (404).
 */
export async function keepResponse(
  store: ResponseStore,
  o: StoreOwner,
  context: unknown[],
  response: { id: string; output: { id?: string }[] } & Record<string, unknown>,
): Promise<SaveOutcome | "failed"> {
  try {
    return await store.repo.save({ userId: o.userId, keyId: o.keyId, id: response.id, response, context });
  } catch (error) {
    log.warn("responses: storing an answered response failed", { response_id: response.id, error });
    return "failed";
  }
}

export function responseStoreRoutes(deps: AppDeps, store: ResponseStore) {
  return new Elysia({ name: "responses-store" })
    .use(apiKeyAuth(deps.auth))
    .get(
      "/v1/responses/:response_id",
      async ({ params, principal }) => {
        const found = await store.repo.get(principal.user.id, principal.keyId, params.response_id);
        if (!found) throw notStored("response", params.response_id, null);
        return found;
      },
      {
        apiKey: "any",
        detail: {
          security: AUTH.apiKey,
          tags: ["responses"],
          summary: "A stored response (RESPONSES_STORE=on), as it was answered; only the key that made it sees it",
          responses: ok(ResponseObject),
        },
      },
    )
    .delete(
      "/v1/responses/:response_id",
      async ({ params, principal }) => {
        if (!(await store.repo.delete(principal.user.id, principal.keyId, params.response_id)))
          throw notStored("response", params.response_id, null);
        return deletedResponse(params.response_id);
      },
      {
        apiKey: "any",
        detail: {
          security: AUTH.apiKey,
          tags: ["responses"],
          summary: "Delete a stored response and its items (only the key that made it)",
          responses: ok(DeletedResponse),
        },
      },
    );
}
