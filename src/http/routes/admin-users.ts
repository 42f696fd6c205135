/**
 * GET /v1/admin/users: the operator's account list — search by email or id, filter by the
 * deleted flag, newest first, keyset-paginated (a cursor stays valid while accounts are added).
 * The query is checked here so that every failure names its field (as the stats routes do).
 */
import { Elysia } from "elysia";
import { ValidationFailure, type ValidationIssue } from "../../core/errors";
import { microToKrw } from "../../lib/money";
import type { UserRow } from "../../db/repos/users";
import type { AppDeps } from "../deps";
import { AUTH } from "../security";
import { ok } from "../openapi/describe";
import { AdminUserList } from "../openapi/shapes";

const USERS_PAGE_DEFAULT = 50;
const USERS_PAGE_MAX = 200;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export interface UsersQuery {
  search?: string;
  deleted?: boolean;
  afterId?: string;
  limit: number;
}

/**
 * Checks `q`, `deleted`, `limit` and `cursor`; every bad field is reported at once (422).
 * Read from the URL itself: the router keeps one value of a repeated parameter silently.
 */
function parseUsersQuery(q: URLSearchParams): UsersQuery {
  const issues: ValidationIssue[] = [];
  const bad = (field: string, msg: string, type = "value_error") => issues.push({ loc: ["query", field], msg, type });
  const one = (field: string): string | undefined => {
    const v = q.getAll(field);
    if (v.length > 1) return void bad(field, "Expected a single value");
    return v[0];
  };
  const out: UsersQuery = { limit: USERS_PAGE_DEFAULT };
  const search = one("q");
  if (search !== undefined && search.length > 320) bad("q", "Expected at most 320 characters", "string_too_long");
  else if (search?.trim()) out.search = search.trim();
  const deleted = one("deleted");
  if (deleted === "true" || deleted === "false") out.deleted = deleted === "true";
  else if (deleted !== undefined) bad("deleted", "Expected true or false", "bool_parsing");
  const limit = one("limit");
  if (limit !== undefined) {
    const n = /^\d{1,4}$/.test(limit) ? Number(limit) : NaN;
    if (n >= 1 && n <= USERS_PAGE_MAX) out.limit = n;
    else bad("limit", `Expected an integer from 1 to ${USERS_PAGE_MAX}`, "int_parsing");
  }
  const cursor = one("cursor");
  if (cursor !== undefined) {
    if (UUID.test(cursor)) out.afterId = cursor.toLowerCase();
    else bad("cursor", "Expected the next_cursor of a previous page");
  }
  if (issues.length) throw new ValidationFailure(issues);
  return out;
}

function toAdminUser(u: UserRow) {
  return {
    user_id: u.id,
    email: u.email,
    balance_krw: microToKrw(u.balanceMicro),
    held_krw: microToKrw(u.heldMicro),
    industry: u.industry,
    regulated: u.regulated,
    xborder_training_consent: u.xborderTrainingConsent,
    deleted: u.deletedAt !== null,
    deleted_at: u.deletedAt?.toISOString() ?? null,
    created_at: u.createdAt.toISOString(),
  };
}

export function adminUserRoutes(deps: AppDeps) {
  return new Elysia({ name: "admin-users", normalize: false })
    .onTransform(async ({ request, server }) => {
      await deps.auth.admin(request, server);
    })
    .get(
      "/v1/admin/users",
      async ({ request }) => {
        const q = parseUsersQuery(new URL(request.url).searchParams);
        const { rows, total } = await deps.users.list(q);
        const page = rows.slice(0, q.limit);
        const more = rows.length > q.limit;
        return {
          object: "list",
          data: page.map(toAdminUser),
          total,
          has_more: more,
          next_cursor: more ? page[page.length - 1]!.id : null,
        };
      },
      {
        detail: {
          security: AUTH.admin,
          tags: ["admin"],
          summary: "List and search accounts (email or id, deleted flag), newest first, paginated",
          parameters: [
            {
              name: "q",
              in: "query",
              schema: { type: "string", maxLength: 320 },
              description: "Part of an email (case-insensitive) or an exact account id",
            },
            {
              name: "deleted",
              in: "query",
              schema: { type: "boolean" },
              description: "Only deleted (true) or only live (false) accounts; both when absent",
            },
            {
              name: "limit",
              in: "query",
              schema: { type: "integer", minimum: 1, maximum: USERS_PAGE_MAX, default: USERS_PAGE_DEFAULT },
            },
            {
              name: "cursor",
              in: "query",
              schema: { type: "string", format: "uuid" },
              description: "next_cursor of the previous page",
            },
          ],
          responses: ok(AdminUserList),
        },
      },
    );
}
