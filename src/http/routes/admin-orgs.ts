/** `GET /v1/admin/orgs`: the organizations and their members with roles and budgets (admin token). */
import { Elysia } from "elysia";
import { Type as T } from "@sinclair/typebox";
import { invalid } from "../../core/errors";
import { listOrgs } from "../../db/repos/orgs";
import type { AppDeps } from "../deps";
import { AUTH } from "../security";
import { named, ok } from "../openapi/describe";

const OrgList = named(
  "OrganizationList",
  T.Object({
    object: T.Literal("list"),
    data: T.Array(
      T.Object({
        org_id: T.String({ format: "uuid" }),
        name: T.String(),
        created_at: T.String({ format: "date-time" }),
        members: T.Array(
          T.Object({
            user_id: T.String({ format: "uuid" }),
            email: T.String(),
            role: T.String(),
            monthly_budget_krw: T.Union([T.Integer(), T.Null()]),
          }),
        ),
      }),
    ),
  }),
);

export function adminOrgRoutes(deps: AppDeps) {
  return new Elysia({ name: "admin-orgs", normalize: false }).get(
    "/v1/admin/orgs",
    async ({ request, server }) => {
      await deps.auth.admin(request, server);
      const raw = new URL(request.url).searchParams.getAll("limit");
      const limit = raw.length ? (raw.length === 1 && /^\d{1,3}$/.test(raw[0]!) ? Number(raw[0]) : NaN) : 100;
      if (!(limit >= 1 && limit <= 500))
        throw invalid(
          ["query", "limit"],
          { ko: "1부터 500까지의 정수여야 합니다.", en: "Expected an integer from 1 to 500" },
          "int_parsing",
        );
      const rows = await listOrgs(deps.db, limit);
      return {
        object: "list",
        data: rows.map((o) => ({
          org_id: o.id,
          name: o.name,
          created_at: new Date(o.created_at).toISOString(),
          members: (o.members ?? []).map((m) => ({
            ...m,
            monthly_budget_krw: m.monthly_budget_krw == null ? null : Number(m.monthly_budget_krw),
          })),
        })),
      };
    },
    {
      detail: {
        security: AUTH.admin,
        tags: ["admin"],
        summary: "Organizations, newest first, each with its members' roles and monthly budgets",
        parameters: [
          { name: "limit", in: "query", schema: { type: "integer", minimum: 1, maximum: 500, default: 100 } },
        ],
        responses: ok(OrgList),
      },
    },
  );
}
