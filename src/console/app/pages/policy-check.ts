/**
 * Checks a policy form with the server's own validation (`POST /v1/routing-policies/validate`)
 * and files each error under the field it names: a 422's `loc`, or the `entries[i]:` /
 * `config.…:` prefix of an `invalid_policy_entry` message.
 */
import { api, ApiError } from "../api";

export type FieldErrors = Partial<
  Record<"slug" | "display_name" | "policy_type" | "entries" | "config" | "form", string>
>;

export function errorsOf(e: unknown): FieldErrors {
  if (!(e instanceof ApiError)) return { form: (e as Error).message };
  const out: FieldErrors = {};
  const put = (field: keyof FieldErrors, msg: string) => (out[field] = out[field] ? `${out[field]} ${msg}` : msg);
  if (e.status === 422 && Array.isArray(e.body?.detail)) {
    for (const d of e.body.detail) {
      const f = d.loc?.[1];
      put(
        ["slug", "display_name", "policy_type", "entries", "config"].includes(f) ? f : "form",
        d.loc?.length > 2 ? `${d.loc.slice(2).join(".")}: ${d.msg}` : d.msg,
      );
    }
    return out;
  }
  if (e.code === "invalid_policy_entry") {
    put(e.message.startsWith("config") ? "config" : "entries", e.message);
    return out;
  }
  return { form: e.message };
}

export async function checkPolicy(body: Record<string, unknown>): Promise<FieldErrors> {
  try {
    await api("POST", "/v1/routing-policies/validate", { body });
    return {};
  } catch (e) {
    return errorsOf(e);
  }
}
