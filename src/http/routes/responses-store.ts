/**
 * Stored responses (RESPONSES_STORE=on): `GET /v1/responses/{id}` and `DELETE
 * /v1/responses/{id}` in OpenAI's shapes, and the wiring the create route uses to resolve
 * earlier turns and keep its answer. A response belongs to the account of the key that made
 * it; any key of that account reads or deletes it, every other caller gets 404.
 */
import { Elysia } from "elysia";
import type { StoredResponseRepo } from "../../db/repos/stored-responses";
import { log } from "../../lib/log";
import { notStored, type ResponseHistory } from "../../surfaces/responses/history";
import type { ResponsesBody } from "../../surfaces/responses/schema";
import { apiKeyAuth } from "../api-key-auth";
import type { AppDeps } from "../deps";
import { ok } from "../openapi/describe";
import { DeletedResponse, ResponseObject } from "../openapi/shapes";
import { AUTH } from "../security";

export interface ResponseStore {
  repo: StoredResponseRepo;
  /** RESPONSES_STORE: off, nothing is kept or resolved (reads and deletes of older rows still work). */
  on: boolean;
}

/** The account's stored history, or null with storage off. */
export function historyOf(store: ResponseStore, userId: string): ResponseHistory | null {
  return store.on
    ? { chain: (id) => store.repo.chain(userId, id), items: (ids) => store.repo.items(userId, ids) }
    : null;
}

/** Whether this request's answer is kept: storage on and the request did not say `store: false`. */
export function keeps(store: ResponseStore, body: ResponsesBody): boolean {
  return store.on && body.store !== false;
}

/**
 * Keeps an answered response with the items that led to it. A failure is logged, not thrown:
 * the call was answered and charged, and only a later turn that names it will miss it (404).
 */
export async function keepResponse(
  store: ResponseStore,
  userId: string,
  context: unknown[],
  response: { id: string; output: { id?: string }[] } & Record<string, unknown>,
): Promise<void> {
  try {
    await store.repo.save({ userId, id: response.id, response, context });
  } catch (error) {
    log.warn("responses: storing an answered response failed", { response_id: response.id, error });
  }
}

export function responseStoreRoutes(d: AppDeps, store: ResponseStore) {
  return new Elysia({ name: "responses-store" })
    .use(apiKeyAuth(d.auth))
    .get(
      "/v1/responses/:response_id",
      async ({ params, principal }) => {
        const found = await store.repo.get(principal.user.id, params.response_id);
        if (!found) throw notStored("response", params.response_id, null);
        return found;
      },
      {
        apiKey: "any",
        detail: {
          security: AUTH.apiKey,
          tags: ["responses"],
          summary: "A stored response (RESPONSES_STORE=on), as it was answered; only its account's keys see it",
          responses: ok(ResponseObject),
        },
      },
    )
    .delete(
      "/v1/responses/:response_id",
      async ({ params, principal }) => {
        if (!(await store.repo.delete(principal.user.id, params.response_id)))
          throw notStored("response", params.response_id, null);
        return { id: params.response_id, object: "response" as const, deleted: true as const };
      },
      {
        apiKey: "any",
        detail: {
          security: AUTH.apiKey,
          tags: ["responses"],
          summary: "Delete a stored response and its items",
          responses: ok(DeletedResponse),
        },
      },
    );
}
