/**
 * Management keys (dashboard JWT) and the provisioning API they unlock (management key):
 * child keys are ordinary API keys of the owner, with only name and monthly budget settable.
 */
import { Elysia } from "elysia";
import { ChildKeyBody, MgmtKeyBody } from "../../surfaces/gateway/key-schemas";
import type { AppDeps } from "../deps";
import { issueApiKey, issueMgmtKey, toKeyRecord, toMgmtRecord } from "../key-records";
import { notFound, queryFlag, requireUuid } from "../params";
import { AUTH } from "../security";
import { created, errors, ok } from "../openapi/describe";
import { Deleted } from "../openapi/shapes";
import { KeyList, KeyRecord, MgmtKeyList, MgmtKeyRecord } from "../../surfaces/gateway/key-answers";

export function managementKeyRoutes(deps: AppDeps) {
  // Each group authenticates in derive, which runs before body validation: a wrong
  // credential is 401 whatever the body.
  const dashboard = new Elysia({ normalize: false })
    .derive(async ({ request }) => ({ user: await deps.auth.jwtUser(request) }))
    .post(
      "/v1/management-keys",
      async ({ user, body, set }) => {
        set.status = 201;
        return issueMgmtKey(deps.keys, user.id, body.name, deps.config.MAX_KEYS_PER_ACCOUNT);
      },
      {
        body: MgmtKeyBody,
        detail: {
          security: AUTH.dashboard,
          tags: ["management keys"],
          summary: "Create a management key (shown once)",
          description:
            "At most `MAX_KEYS_PER_ACCOUNT` live management keys per account: past it 403 `key_limit_exceeded`.",
          responses: { ...created(MgmtKeyRecord), ...errors(403) },
        },
      },
    )
    .get(
      "/v1/management-keys",
      async ({ user }) => {
        const items = (await deps.keys.listMgmt(user.id)).map((r) => toMgmtRecord(r));
        return { items, total: items.length } satisfies MgmtKeyList;
      },
      {
        detail: {
          security: AUTH.dashboard,
          tags: ["management keys"],
          summary: "List management keys",
          responses: ok(MgmtKeyList),
        },
      },
    )
    .delete(
      "/v1/management-keys/:id",
      async ({ user, params, request }) => {
        const id = requireUuid(params.id);
        const cascade = queryFlag(request, "cascade");
        const done = await deps.keys.deleteMgmt(user.id, id, { cascade });
        if (!done) throw notFound("관리 키");
        // Cached principals of the children go at once here and within a second elsewhere.
        for (const child of done.children) await deps.bus.publish({ t: "key", id: child });
        return cascade ? { ok: true, id, deleted_key_ids: done.children } : { ok: true, id };
      },
      {
        detail: {
          security: AUTH.dashboard,
          tags: ["management keys"],
          summary: "Delete a management key; with cascade=true also every key it provisioned",
          description:
            "By default the keys it provisioned keep working (each key record names its parent in `management_key_id`, " +
            "so they can be found and deleted later). With `?cascade=true` they are deleted in the same transaction and " +
            "the answer lists them in `deleted_key_ids`; their secrets are refused (401) at once. `cascade` must be `true` " +
            "or `false` (422 otherwise).",
          parameters: [{ name: "cascade", in: "query", required: false, schema: { type: "boolean", default: false } }],
          responses: ok(Deleted),
        },
      },
    );
  const provisioning = new Elysia({ normalize: false })
    .derive(async ({ request, server }) => ({ m: await deps.auth.mgmtKey(request, server) }))
    .get(
      "/v1/provisioning/keys",
      async ({ m }) => {
        const items = (await deps.keys.listForMgmtKey(m.mgmtKeyId)).map((r) => toKeyRecord(r));
        return { items, total: items.length } satisfies KeyList;
      },
      {
        detail: {
          security: AUTH.managementKey,
          tags: ["provisioning"],
          summary: "Child keys provisioned by this management key",
          responses: ok(KeyList),
        },
      },
    )
    .post(
      "/v1/provisioning/keys",
      async ({ m, body, set }) => {
        set.status = 201;
        return issueApiKey(
          deps.keys,
          {
            userId: m.userId,
            kind: "standard",
            managementKeyId: m.mgmtKeyId,
            name: body?.name ?? "Default",
            monthlyBudgetKrw: body?.monthly_budget_krw ?? null,
          },
          deps.config.MAX_KEYS_PER_ACCOUNT,
        );
      },
      {
        body: ChildKeyBody,
        detail: {
          security: AUTH.managementKey,
          tags: ["provisioning"],
          summary: "Create a child key (name and monthly_budget_krw only)",
          description:
            "Child keys count against the account's `MAX_KEYS_PER_ACCOUNT` live API keys: past it 403 `key_limit_exceeded`.",
          responses: { ...created(KeyRecord), ...errors(403) },
        },
      },
    )
    .delete(
      "/v1/provisioning/keys/:id",
      async ({ m, params }) => {
        const id = requireUuid(params.id);
        if (!(await deps.keys.softDelete(m.userId, id, m.mgmtKeyId))) throw notFound("API 키");
        await deps.bus.publish({ t: "key", id });
        return { ok: true, id };
      },
      {
        detail: {
          security: AUTH.managementKey,
          tags: ["provisioning"],
          summary: "Delete a child key",
          responses: ok(Deleted),
        },
      },
    );
  return new Elysia({ name: "management-keys", normalize: false }).use(dashboard).use(provisioning);
}
