/** Operator endpoints (`Authorization: Bearer <ADMIN_TOKEN>`), per the operator contract. */
import { Elysia, t } from "elysia";
import { Type, type Static } from "@sinclair/typebox";
import { GatewayError, issue, text, ValidationFailure } from "../../core/errors";
import { byokContext } from "../../lib/secret-box";
import { krwToMicro, microToKrw } from "../../lib/money";
import { SETTING_DEFAULTS } from "../../db/repos/settings";
import type { AppDeps } from "../deps";
import { issueApiKey } from "../key-records";
import { notFound, requireUuid } from "../params";
import { toMe } from "./account";
import { AUTH } from "../security";
import { created, errors, ok } from "../openapi/describe";
import { Me, Org, OrgMember, Settings, Topup } from "../openapi/shapes";
import { KeyRecord } from "../../surfaces/gateway/key-answers";
import { idempotencyKeyOf } from "../../surfaces/video/schema";
import { IDEMPOTENCY_KEY_MAX } from "../../core/video/service";
import { sha256Hex } from "../../lib/secrets";
import { topupSplit } from "../../core/payments/fee";

/** A JSON integer. (Elysia's `t.Integer` also accepts numeric strings such as "1000".) */
const StrictInt = (opts: { minimum?: number; maximum?: number }) => Type.Integer(opts);

export function adminRoutes(deps: AppDeps) {
  const liveUser = async (id: string) => {
    const u = await deps.users.live(requireUuid(id, "user_id"));
    if (!u) throw notFound("사용자");
    return u;
  };
  return (
    new Elysia({ name: "admin", normalize: false })
      // Transform runs before body validation: without the token (or with the endpoints
      // disabled) a caller learns nothing about the bodies, and gets 401/404 rather than 422.
      .onTransform(async ({ request, server }) => {
        await deps.auth.admin(request, server);
      })
      .post(
        "/v1/admin/users/:user_id/topups",
        async ({ params, body, set, request }) => {
          const idemKey = idempotencyKeyOf(request);
          const u = await liveUser(params.user_id);
          const { fee, credited } = topupSplit(body.amount_krw);
          const meta = { paid_krw: body.amount_krw, fee_krw: fee };
          const amount = krwToMicro(BigInt(credited));
          let balance: bigint | null;
          if (idemKey === null) balance = await deps.users.topup(u.id, amount, meta);
          else {
            // Credited once per key, in the same transaction as the key's record (gw_topup_once).
            const hash = sha256Hex(`${u.id}:${body.amount_krw}`);
            const r = await deps.users.topupOnce(idemKey, hash, u.id, amount, body.amount_krw, meta);
            if (r.state === "reused") throw new GatewayError("idempotency_key_reused");
            if (r.state === "replay") set.headers["idempotent-replayed"] = "true";
            balance = r.balanceMicro;
          }
          if (balance === null) throw notFound("사용자");
          set.status = 201;
          return {
            paid_krw: body.amount_krw,
            fee_krw: fee,
            credited_krw: credited,
            balance_krw: microToKrw(balance),
          } satisfies Static<typeof Topup>;
        },
        {
          body: t.Object({ amount_krw: StrictInt({ minimum: 1, maximum: 10_000_000_000 }) }),
          detail: {
            security: AUTH.admin,
            tags: ["admin"],
            summary: "Top up an account (3% fee)",
            description:
              "With `Idempotency-Key` (1–128 characters) the same key credits once: a repeat with the same account and amount answers the first top-up again (`Idempotent-Replayed: true`, the balance as it was then) and credits nothing; the same key with another account or amount is 422 `idempotency_key_reused`.",
            parameters: [
              {
                name: "Idempotency-Key",
                in: "header",
                required: false,
                description: "A retry with the same key and body gets the first answer again and credits nothing",
                schema: { type: "string", minLength: 1, maxLength: IDEMPOTENCY_KEY_MAX },
              },
            ],
            responses: { ...created(Topup), ...errors(422) },
          },
        },
      )
      .patch(
        "/v1/admin/users/:user_id",
        async ({ params, body }) => {
          const id = requireUuid(params.user_id, "user_id");
          const row = await deps.users.patchFlags(id, {
            regulated: body.regulated,
            xborderTrainingConsent: body.xborder_training_consent,
            deleted: body.deleted,
          });
          if (!row) throw notFound("사용자");
          await deps.bus.publish({ t: "user", id });
          return toMe(row);
        },
        {
          body: t.Object({
            regulated: t.Optional(t.Boolean()),
            xborder_training_consent: t.Optional(t.Boolean()),
            deleted: t.Optional(t.Boolean()),
          }),
          detail: {
            security: AUTH.admin,
            tags: ["admin"],
            summary: "Set account flags (regulated, training consent, deleted)",
            responses: ok(Me),
          },
        },
      )
      .get("/v1/admin/settings", () => deps.settings.get(), {
        detail: { security: AUTH.admin, tags: ["admin"], summary: "Operator settings", responses: ok(Settings) },
      })
      .patch(
        "/v1/admin/settings",
        async ({ body }) => {
          const issues = Object.entries(body as Record<string, unknown>).flatMap(([k, v]) =>
            !(k in SETTING_DEFAULTS)
              ? [issue(["body", k], text("알 수 없는 설정입니다.", "unknown setting"), "extra_forbidden")]
              : typeof v !== "boolean"
                ? [issue(["body", k], text("true 또는 false여야 합니다.", "Expected boolean"), "Boolean")]
                : [],
          );
          if (issues.length) throw new ValidationFailure(issues);
          const next = await deps.settings.patch(body as Record<string, unknown>);
          await deps.bus.publish({ t: "settings" });
          return next;
        },
        {
          body: t.Record(t.String(), t.Unknown()),
          detail: {
            security: AUTH.admin,
            tags: ["admin"],
            summary: "Change any subset of the settings",
            responses: ok(Settings),
          },
        },
      )
      .post(
        "/v1/admin/orgs",
        async ({ body, set }) => {
          await liveUser(body.owner_user_id);
          const org = await deps.users.createOrg(body.name, body.owner_user_id.toLowerCase());
          set.status = 201;
          return { org_id: org.id, name: org.name } satisfies Static<typeof Org>;
        },
        {
          body: t.Object({ name: t.String({ minLength: 1, maxLength: 100 }), owner_user_id: t.String() }),
          detail: {
            security: AUTH.admin,
            tags: ["admin"],
            summary: "Create an organization",
            responses: { ...created(Org), ...errors(404) },
          },
        },
      )
      .post(
        "/v1/admin/orgs/:org_id/members",
        async ({ params, body, set }) => {
          const orgId = requireUuid(params.org_id, "org_id");
          if (!(await deps.users.orgExists(orgId))) throw notFound("조직");
          const u = await liveUser(body.user_id);
          const m = await deps.users.upsertMember(orgId, u.id, body.role, body.monthly_budget_krw ?? null);
          set.status = 201;
          return { org_id: m.orgId, user_id: m.userId, role: m.role, monthly_budget_krw: m.monthlyBudgetKrw ?? null };
        },
        {
          body: t.Object({
            user_id: t.String(),
            role: t.Union([t.Literal("owner"), t.Literal("admin"), t.Literal("member")]),
            monthly_budget_krw: t.Optional(t.Union([StrictInt({ minimum: 0, maximum: 1_000_000_000_000 }), t.Null()])),
          }),
          detail: {
            security: AUTH.admin,
            tags: ["admin"],
            summary: "Add (or update) an organization member",
            responses: created(OrgMember),
          },
        },
      )
      .post(
        "/v1/admin/users/:user_id/delegated-keys",
        async ({ params, body, set }) => {
          const u = await liveUser(params.user_id);
          set.status = 201;
          return issueApiKey(deps.keys, { userId: u.id, kind: "delegated", name: body?.name ?? "Delegated" });
        },
        {
          body: t.Optional(t.Object({ name: t.Optional(t.String({ minLength: 1, maxLength: 100 })) })),
          detail: {
            security: AUTH.admin,
            tags: ["admin"],
            summary: "Issue a first-party delegated key",
            responses: created(KeyRecord),
          },
        },
      )
      .post(
        "/v1/admin/users/:user_id/byok-keys",
        async ({ params, body, set }) => {
          const u = await liveUser(params.user_id);
          if (!deps.chatProviderIds().includes(body.provider)) {
            throw new ValidationFailure([
              issue(
                ["body", "provider"],
                text(
                  `알 수 없는 제공자입니다. 가능한 값: ${deps.chatProviderIds().join(", ")}`,
                  `unknown provider; one of ${deps.chatProviderIds().join(", ")}`,
                ),
                "enum",
              ),
            ]);
          }
          // Never stored in clear: without a key there is no BYOK (the operator sets one; demo mode has one).
          if (!deps.byok)
            throw new GatewayError(
              "byok_encryption_unavailable",
              text(
                "BYOK_ENCRYPTION_KEY가 설정되지 않아 BYOK 키를 만들 수 없습니다.",
                "BYOK keys cannot be created: BYOK_ENCRYPTION_KEY is not set.",
              ),
            );
          const id = crypto.randomUUID();
          const byokSecret = deps.byok.seal(body.provider_api_key, byokContext(id));
          set.status = 201;
          return issueApiKey(deps.keys, {
            id,
            userId: u.id,
            kind: "byok",
            name: body.name ?? "BYOK",
            byokProvider: body.provider,
            byokSecret,
          });
        },
        {
          body: t.Object({
            name: t.Optional(t.String({ minLength: 1, maxLength: 100 })),
            provider: t.String({ minLength: 1 }),
            provider_api_key: t.String({ minLength: 1, maxLength: 1000 }),
          }),
          detail: {
            security: AUTH.admin,
            tags: ["admin"],
            summary: "Issue a BYOK key (calls use the user's own provider credential)",
            description:
              "`provider_api_key` is sealed with AES-256-GCM under BYOK_ENCRYPTION_KEY before it is stored and opened only to call the provider; " +
              "it never appears in an answer. Without BYOK_ENCRYPTION_KEY (outside demo mode) this is 503 `byok_encryption_unavailable`.",
            responses: created(KeyRecord),
          },
        },
      )
  );
}
