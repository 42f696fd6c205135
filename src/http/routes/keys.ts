/** `/v1/keys*` (dashboard JWT): create, list, usage, update, delete API keys. */
import { Elysia } from "elysia";
import { GatewayError } from "../../core/errors";
import { microToKrw } from "../../lib/money";
import { CreateKeyBody, PatchKeyBody } from "../../surfaces/gateway/key-schemas";
import type { AppDeps } from "../deps";
import { issueApiKey, keyPatchFromBody, toKeyRecord } from "../key-records";
import { notFound, requireUuid } from "../params";
import { currentMonth } from "../../core/billing/ledger";
import { AUTH } from "../security";
import { created, errors, ok } from "../openapi/describe";
import { Deleted } from "../openapi/shapes";
import { KeyList, KeyRecord, KeyUsage } from "../../surfaces/gateway/key-answers";

const maskingRequired = () => new GatewayError("pii_masking_required");

export function keyRoutes(deps: AppDeps) {
  return (
    new Elysia({ name: "keys", normalize: false })
      // Derive runs before body validation: without a dashboard login the answer is 401, not a
      // 422 describing the body.
      .derive(async ({ request }) => ({ user: await deps.auth.jwtUser(request) }))
      .post(
        "/v1/keys",
        async ({ user, body, set }) => {
          const patch = keyPatchFromBody(body ?? {});
          if (user.regulated && patch.piiMaskingEnabled === false) throw maskingRequired();
          set.status = 201;
          return issueApiKey(
            deps.keys,
            { userId: user.id, kind: "standard", ...patch },
            deps.config.MAX_KEYS_PER_ACCOUNT,
          );
        },
        {
          body: CreateKeyBody,
          detail: {
            security: AUTH.dashboard,
            tags: ["keys"],
            summary: "Create an API key (the secret is shown once)",
            description:
              "An account has at most `MAX_KEYS_PER_ACCOUNT` live API keys (default 100), provisioned child keys included: past it 403 `key_limit_exceeded`.",
            responses: { ...created(KeyRecord), ...errors(403) },
          },
        },
      )
      .get(
        "/v1/keys",
        async ({ user }) => {
          const items = (await deps.keys.listForUser(user.id)).map((row) => toKeyRecord(row));
          return { items, total: items.length } satisfies KeyList;
        },
        {
          detail: {
            security: AUTH.dashboard,
            tags: ["keys"],
            summary: "List API keys (never the secret)",
            description:
              "`management_key_id` names the management key that provisioned a key (also after that key is deleted); null for keys made here or by an operator.",
            responses: ok(KeyList),
          },
        },
      )
      .get(
        "/v1/keys/usage",
        async ({ user }) => {
          const month = currentMonth();
          const items = (await deps.keys.monthlyUsage(user.id, month)).map((usage) => ({
            key_id: usage.keyId,
            name: usage.name,
            key_prefix: usage.keyPrefix,
            spent_krw: microToKrw(usage.spentMicro),
            held_krw: microToKrw(usage.heldMicro),
            tokens: usage.tokens,
            requests: usage.requests,
            monthly_budget_krw: usage.monthlyBudgetKrw,
            monthly_token_limit: usage.monthlyTokenLimit,
          }));
          return { month, items, total: items.length } satisfies KeyUsage;
        },
        {
          detail: {
            security: AUTH.dashboard,
            tags: ["keys"],
            summary: "This month's spend and tokens per key",
            responses: ok(KeyUsage),
          },
        },
      )
      .patch(
        "/v1/keys/:id",
        async ({ user, params, body }) => {
          const id = requireUuid(params.id);
          const patch = keyPatchFromBody(body ?? {});
          if (user.regulated && patch.piiMaskingEnabled === false) throw maskingRequired();
          const row = await deps.keys.update(user.id, id, patch);
          if (!row) throw notFound("API 키");
          await deps.bus.publish({ t: "key", id });
          return toKeyRecord(row);
        },
        {
          body: PatchKeyBody,
          detail: {
            security: AUTH.dashboard,
            tags: ["keys"],
            summary: "Update a key: any field of the key table except key and created_at",
            responses: { ...ok(KeyRecord), ...errors(403) },
          },
        },
      )
      .delete(
        "/v1/keys/:id",
        async ({ user, params }) => {
          const id = requireUuid(params.id);
          if (!(await deps.keys.softDelete(user.id, id))) throw notFound("API 키");
          await deps.bus.publish({ t: "key", id });
          return { ok: true, id };
        },
        {
          detail: {
            security: AUTH.dashboard,
            tags: ["keys"],
            summary: "Delete a key (refused at once, on every instance within a second)",
            responses: ok(Deleted),
          },
        },
      )
  );
}
