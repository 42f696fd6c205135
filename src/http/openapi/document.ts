/**
 * The OpenAPI 3.1 document, built once from the app's routes: each route's `detail` (summary,
 * tags, security, parameters, responses: see ./describe.ts), its body schema, and the errors
 * every route of its kind can answer. OpenAPI 3.1 because its schemas are JSON Schema 2020-12,
 * which is what TypeBox writes (`const`, `type: "null"`). Request bodies stay inline (the
 * fuzzer reads them); answer schemas named with `named()` become components.
 */
import { OptionalKind } from "@sinclair/typebox";
import { SECURITY_SCHEMES } from "../security";
import { CompatibleError, StructuredError, ValidationErrorBody } from "../../surfaces/openai/error-schemas";
import {
  ERROR_RESPONSES,
  errors,
  HEADERS,
  schemaName,
  withHeaders,
  type ErrorStatus,
  type HeaderName,
} from "./describe";

export interface DocRoute {
  method: string;
  path: string;
  hooks?: { body?: unknown; response?: unknown; detail?: Record<string, any> };
}

const METHODS = new Set(["GET", "PUT", "POST", "DELETE", "PATCH", "HEAD"]);

/** Elysia's `/v1/jobs/:job_id` and `/v1/models/*` as OpenAPI paths; a `*` takes the name the route's path parameter declares. */
export function openApiPath(path: string, wildcardName = "path"): string {
  return path
    .split("/")
    .map((s) => (s.startsWith(":") ? `{${s.slice(1).replace(/\?$/, "")}}` : s === "*" ? `{${wildcardName}}` : s))
    .join("/");
}

/** A route's OpenAPI path, with its wildcard named by a declared path parameter. */
export function documentedPath(r: DocRoute): string {
  const declared = (r.hooks?.detail?.parameters ?? [])
    .filter((p: any) => p?.in === "path")
    .map((p: any) => p.name as string);
  const named = new Set(
    r.path
      .split("/")
      .filter((s) => s.startsWith(":"))
      .map((s) => s.slice(1)),
  );
  return openApiPath(
    r.path,
    declared.find((n: string) => !named.has(n)),
  );
}

function operationId(method: string, path: string): string {
  const words = path.split(/[/{}_.-]+/).filter(Boolean);
  return method.toLowerCase() + words.map((w) => w[0]!.toUpperCase() + w.slice(1)).join("");
}

/** A JSON copy without TypeBox's symbols; named schemas inside become `$ref`s (collected in `out`). */
function toJson(schema: unknown, out: Record<string, unknown>, top = true): unknown {
  const name = top ? undefined : schemaName(schema);
  if (name) {
    if (!(name in out)) {
      out[name] = null; // reserve: a schema may mention itself
      out[name] = toJson(schema, out, true);
    }
    return { $ref: `#/components/schemas/${name}` };
  }
  if (Array.isArray(schema)) return schema.map((x) => toJson(x, out, false));
  if (schema && typeof schema === "object")
    return Object.fromEntries(Object.entries(schema).map(([k, v]) => [k, toJson(v, out, false)]));
  return schema;
}

const responseSchemas = (r: DocRoute): Record<string, unknown> => {
  const res = r.hooks?.response as any;
  if (!res || typeof res !== "object") return {};
  if ("type" in res || "anyOf" in res)
    return { 200: { description: "OK", content: { "application/json": { schema: res } } } };
  return Object.fromEntries(
    Object.entries(res).map(([s, schema]) => [
      s,
      { description: Number(s) < 300 ? "OK" : "Error", content: { "application/json": { schema } } },
    ]),
  );
};

/** The errors a route can answer by what it takes and who may call it. */
function implicitErrors(r: DocRoute, path: string, security: Record<string, string[]>[]): Record<string, unknown> {
  const s = new Set<ErrorStatus>([503]);
  const schemes = security.flatMap((alt) => Object.keys(alt));
  if (schemes.length) s.add(401);
  if (schemes.includes("apiKey")) s.add(403), s.add(429);
  // Wrong operator or scraper tokens are throttled per address (ADMIN_FAILURES_PER_IP).
  if (schemes.includes("adminToken") || schemes.includes("metricsToken")) s.add(429);
  const hasBody = r.hooks?.body !== undefined;
  const hasParams = path.includes("{") || (r.hooks?.detail?.parameters ?? []).some((p: any) => p?.in === "query");
  if (hasBody || hasParams) s.add(400), s.add(422);
  if (hasBody) s.add(413);
  // A path parameter names something that may not exist; the admin endpoints are 404 while ADMIN_TOKEN is unset.
  if (path.includes("{") || schemes.includes("adminToken") || schemes.includes("metricsToken")) s.add(404);
  return errors(...[...s].sort());
}

/** The OpenAI dialect's error bodies, as the renderer writes them (src/http/errors.ts). */
const SHAPES = { detail: StructuredError, envelope: CompatibleError, validation: ValidationErrorBody };

function errorComponents() {
  const responses: Record<string, unknown> = {};
  for (const spec of Object.values(ERROR_RESPONSES)) {
    const refs = spec.shapes.map((sh) => ({ $ref: `#/components/schemas/${schemaName(SHAPES[sh])}` }));
    const headers =
      spec.name === "TooManyRequests" || spec.name === "ServiceUnavailable"
        ? { "Retry-After": { $ref: "#/components/headers/Retry-After" } }
        : undefined;
    responses[spec.name] = {
      description: spec.description,
      ...(headers && { headers }),
      content: { "application/json": { schema: refs.length === 1 ? refs[0] : { anyOf: refs } } },
    };
  }
  const schemas: Record<string, unknown> = {};
  for (const shape of Object.values(SHAPES)) toJson(shape, schemas, false);
  return { responses, schemas };
}

export interface DocumentInfo {
  title: string;
  version: string;
  description: string;
}

export const TAGS: Record<string, string> = {
  account: "Sign up, log in, the caller's account",
  keys: "API keys (dashboard)",
  "management keys": "Management keys (dashboard)",
  provisioning: "Child keys, with a management key",
  models: "The model catalog",
  chat: "OpenAI-compatible chat completions",
  embeddings: "OpenAI-compatible embeddings",
  responses: "The Responses API and feedback",
  messages: "Anthropic's Messages API (any model; Anthropic SDK, Claude Code)",
  video: "Video generation jobs",
  "routing policies": "Routing policies (dashboard)",
  stats: "Public statistics",
  usage: "Usage report (API key)",
  billing: "Self-service credits: checkout at the payment provider, webhooks, history (docs/payments.md)",
  admin: "Operator endpoints (ADMIN_TOKEN)",
  operations: "Health, readiness, metrics",
};

/** The document for these routes. Routes with `detail.hide` are left out. */
export function buildOpenApiDocument(routes: readonly DocRoute[], info: DocumentInfo) {
  const schemas: Record<string, unknown> = {};
  const paths: Record<string, Record<string, unknown>> = {};
  const tags = new Set<string>();
  for (const r of routes) {
    const detail = r.hooks?.detail ?? {};
    if (!METHODS.has(r.method) || detail.hide) continue;
    const path = documentedPath(r);
    const { hide: _h, responses: declared, parameters: declaredParams, security: declaredSecurity, ...rest } = detail;
    const security: Record<string, string[]>[] = Array.isArray(declaredSecurity) ? declaredSecurity : [];
    const params: any[] = [...(declaredParams ?? [])];
    for (const m of path.matchAll(/\{([^}]+)\}/g)) {
      if (!params.some((p) => p.in === "path" && p.name === m[1]))
        params.unshift({ name: m[1], in: "path", required: true, schema: { type: "string" } });
    }
    const documented = { ...responseSchemas(r), ...(declared ?? {}) };
    const op: Record<string, unknown> = {
      operationId: detail.operationId ?? operationId(r.method, path),
      ...rest,
      ...(params.length && { parameters: params }),
      // Without a declaration the route has no success status of its own: flagged, and the OpenAPI test fails on it.
      ...(declared === undefined && !r.hooks?.response && { "x-undocumented": true }),
      ...(!Array.isArray(declaredSecurity) && { "x-security-undeclared": true }),
      security,
    };
    if (r.hooks?.body !== undefined) {
      const body = r.hooks.body as any;
      op.requestBody = {
        required: !(OptionalKind in body),
        content: { "application/json": { schema: toJson(body, schemas) } },
      };
    }
    // Every answer carries X-Request-Id; an API key's answers carry its rate-limit counters.
    const common: HeaderName[] = [
      "X-Request-Id",
      ...(security.some((alt) => "apiKey" in alt)
        ? (["X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset"] as const)
        : []),
    ];
    const all = { ...implicitErrors(r, path, security), ...withHeaders(documented, ...common) };
    if (declared === undefined && !Object.keys(documented).some((s) => s.startsWith("2")))
      all["200"] = { description: "Undocumented" };
    op.responses = toJson(Object.fromEntries(Object.entries(all).sort(([a], [b]) => a.localeCompare(b))), schemas);
    for (const t of (detail.tags as string[] | undefined) ?? []) tags.add(t);
    (paths[path] ??= {})[r.method.toLowerCase()] = op;
  }
  const errs = errorComponents();
  return {
    openapi: "3.1.0",
    info,
    servers: [{ url: "/", description: "This gateway" }],
    tags: [...tags].sort().map((name) => ({ name, ...(TAGS[name] && { description: TAGS[name] }) })),
    paths: Object.fromEntries(Object.entries(paths).sort(([a], [b]) => a.localeCompare(b))),
    components: {
      securitySchemes: SECURITY_SCHEMES,
      schemas: {
        ...errs.schemas,
        ...Object.fromEntries(Object.entries(schemas).sort(([a], [b]) => a.localeCompare(b))),
      },
      responses: errs.responses,
      headers: HEADERS,
    },
  };
}
