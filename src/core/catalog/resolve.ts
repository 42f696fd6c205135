/**
 * Model id resolution: what a client's `model` value means. Pure: snapshot and string in, a
 * resolution out, or a `GatewayError` (400) with a Korean message and suggestions.
 *
 * Forms: `gpt-4o-mini` (short), `openai/gpt-4o-mini` (vendor, converted to short),
 * `deepseek-v3@together` (pins one provider; also `openai/gpt-4o@openai`), routing parents
 * (`benchmark_smart`: their candidate leaves in order), `orch/<slug>` and `policy/<slug>`
 * (handed to the policy engine), retired parents (400 naming the current parents).
 */
import { GatewayError, text, type Text } from "../errors";
import { suggestModels } from "./suggest";
import {
  getModel,
  getModelByAlias,
  getModelByVendorId,
  getOfferings,
  getProvider,
  type CatalogModel,
  type CatalogOffering,
  type CatalogSnapshot,
  type Modality,
} from "./types";

/** A leaf with the offerings a call may use, in default provider order. */
export interface ResolvedLeaf {
  readonly model: CatalogModel;
  readonly offerings: readonly CatalogOffering[];
}

export type ModelResolution =
  | {
      readonly kind: "leaf";
      /** The id as the client sent it. */
      readonly requested: string;
      readonly model: CatalogModel;
      /** All of the model's offerings, or only the pinned provider's. */
      readonly offerings: readonly CatalogOffering[];
      /** The provider of `model@provider`; null when not pinned. */
      readonly pinnedProvider: string | null;
    }
  | {
      readonly kind: "parent";
      readonly requested: string;
      /** The routing parent itself. */
      readonly model: CatalogModel;
      /** Its candidate leaves in routing order, each with its offerings. */
      readonly candidates: readonly ResolvedLeaf[];
    }
  | {
      readonly kind: "policy";
      readonly requested: string;
      readonly prefix: "orch" | "policy";
      readonly slug: string;
    };

/** The routing-policy slug pattern of the specification. */
export const POLICY_SLUG = /^[a-z0-9][a-z0-9-]{0,62}$/;

/** `orch/<slug>` or `policy/<slug>` → its parts; null for any other id. */
export function parsePolicyRef(id: string): { prefix: "orch" | "policy"; slug: string } | null {
  for (const prefix of ["orch", "policy"] as const) {
    if (id.startsWith(`${prefix}/`)) return { prefix, slug: id.slice(prefix.length + 1) };
  }
  return null;
}

/**
 * Short id, vendor id, alias (bare or vendor-prefixed), or (case-insensitively) any of them;
 * undefined when unknown. An alias finds its catalog model, so callers see the catalog id.
 */
export function findModel(snapshot: CatalogSnapshot, id: string): CatalogModel | undefined {
  const exact = lookup(snapshot, id);
  if (exact) return exact;
  const lower = id.toLowerCase();
  return lower === id ? undefined : lookup(snapshot, lower);
}

function lookup(snapshot: CatalogSnapshot, id: string): CatalogModel | undefined {
  return getModel(snapshot, id) ?? getModelByVendorId(snapshot, id) ?? getModelByAlias(snapshot, id);
}

/** Resolves a client's model value. Throws `GatewayError` (400) for anything not callable. */
export function resolveModel(snapshot: CatalogSnapshot, id: string): ModelResolution {
  const requested = id;
  const policy = parsePolicyRef(id);
  if (policy) {
    if (!POLICY_SLUG.test(policy.slug)) {
      throw new GatewayError(
        "policy_not_found",
        text(
          `라우팅 정책 이름 '${policy.slug}'의 형식이 올바르지 않습니다.`,
          `The routing policy name '${policy.slug}' is malformed.`,
        ),
      );
    }
    return { kind: "policy", requested, ...policy };
  }

  const at = id.lastIndexOf("@");
  const base = at >= 0 ? id.slice(0, at) : id;
  const pin = at >= 0 ? id.slice(at + 1) : null;
  const model = base.length > 0 ? findModel(snapshot, base) : undefined;
  if (!model) throw modelNotFound(snapshot, base || id);
  if (model.kind === "retired") throw retiredModel(model);
  if (!model.active) {
    const suggestions = suggestModels(snapshot, model.id);
    throw new GatewayError(
      "model_not_found",
      withSuggestions(
        text(`'${model.id}' 모델은 현재 사용할 수 없습니다.`, `The model '${model.id}' is currently unavailable.`),
        suggestions,
      ),
      { suggestions },
    );
  }

  if (model.kind === "parent") {
    if (pin !== null) {
      throw new GatewayError(
        "model_not_found",
        text(
          `'${model.id}'은(는) 라우팅 부모 모델이라 제공자를 지정할 수 없습니다. 제공자를 지정하려면 리프 모델을 호출하세요: ${model.candidates.join(", ")}.`,
          `'${model.id}' is a routing parent model and takes no provider. To pick a provider, call a leaf model: ${model.candidates.join(", ")}.`,
        ),
        { suggestions: model.candidates.slice(0, 5) },
      );
    }
    const candidates = model.candidates.map((c) => {
      const leaf = getModel(snapshot, c)!; // verified: an active text leaf
      return { model: leaf, offerings: getOfferings(snapshot, leaf.id) };
    });
    return { kind: "parent", requested, model, candidates };
  }

  const offerings = getOfferings(snapshot, model.id);
  if (pin === null) return { kind: "leaf", requested, model, offerings, pinnedProvider: null };

  const pinned = offerings.filter((o) => o.providerId === pin);
  if (pinned.length === 0) throw badPin(snapshot, model, offerings, pin);
  return { kind: "leaf", requested, model, offerings: pinned, pinnedProvider: pin };
}

/**
 * Resolves and insists on one modality: chat and responses take `text`, the video endpoint
 * `video`, the semantic cache `embedding`. Routing parents count as text; policies pass
 * (the policy engine checks its own entries). A mismatch is 400 `model_not_found`.
 */
export function resolveModelFor(snapshot: CatalogSnapshot, id: string, modality: Modality): ModelResolution {
  const resolution = resolveModel(snapshot, id);
  requireModality(snapshot, resolution, modality);
  return resolution;
}

/** Throws 400 when a resolved model is not of `modality`. */
export function requireModality(snapshot: CatalogSnapshot, resolution: ModelResolution, modality: Modality): void {
  if (resolution.kind === "policy") return;
  const actual = resolution.model.modality;
  if (actual === modality) return;
  const suggestions = suggestModels(snapshot, resolution.model.id, { modality });
  throw new GatewayError(
    "model_not_found",
    withSuggestions(
      text(
        `'${resolution.model.id}'은(는) ${MODALITY_KO[actual]} 모델이라 ${MODALITY_KO[modality]} 요청에 사용할 수 없습니다.`,
        `'${resolution.model.id}' is ${withArticle(MODALITY_EN[actual])} model and cannot serve ${withArticle(MODALITY_EN[modality])} request.`,
      ),
      suggestions,
    ),
    { suggestions },
  );
}

/** Offerings of `modality` only (for example to keep video offerings out of a chat fallback list). */
export function offeringsOfModality(
  snapshot: CatalogSnapshot,
  offerings: readonly CatalogOffering[],
  modality: Modality,
): CatalogOffering[] {
  return offerings.filter((o) => getModel(snapshot, o.modelId)?.modality === modality);
}

/** What a model is, in the terms callers branch on. */
export type ModelClass = "text" | "embedding" | "video" | "parent" | "retired";

export function classifyModel(model: CatalogModel): ModelClass {
  if (model.kind === "parent" || model.kind === "retired") return model.kind;
  return model.modality;
}

export const isLeaf = (m: CatalogModel): boolean => m.kind === "leaf";
export const isParent = (m: CatalogModel): boolean => m.kind === "parent";
export const isVideo = (m: CatalogModel): boolean => m.kind === "leaf" && m.modality === "video";
export const isEmbedding = (m: CatalogModel): boolean => m.kind === "leaf" && m.modality === "embedding";

export type PolicyEntryCheck =
  | { readonly ok: true; readonly model: CatalogModel; readonly pinnedProvider: string | null }
  | {
      readonly ok: false;
      readonly reason:
        | "policy"
        | "parent"
        | "retired"
        | "not_found"
        | "inactive"
        | "not_text"
        | "unpriced"
        | "bad_provider";
      /** For the 400 `invalid_policy_entry` body. */
      readonly message: Text;
    };

/**
 * Whether `id` may be a routing-policy entry: an active text leaf with a unit price (optionally
 * `model@provider` with a provider that offers it). Policies, routing parents and retired
 * parents are refused, as the specification says.
 */
export function checkPolicyEntryModel(snapshot: CatalogSnapshot, id: string): PolicyEntryCheck {
  if (parsePolicyRef(id))
    return {
      ok: false,
      reason: "policy",
      message: text(
        `다른 정책('${id}')은 정책 항목이 될 수 없습니다.`,
        `Another policy ('${id}') cannot be a policy entry.`,
      ),
    };
  const at = id.lastIndexOf("@");
  const base = at >= 0 ? id.slice(0, at) : id;
  const pin = at >= 0 ? id.slice(at + 1) : null;
  const model = findModel(snapshot, base);
  if (!model)
    return {
      ok: false,
      reason: "not_found",
      message: text(`'${base}' 모델을 찾을 수 없습니다.`, `Model '${base}' not found.`),
    };
  if (model.kind === "retired") {
    return {
      ok: false,
      reason: "retired",
      message: text(
        `'${model.id}'은(는) 은퇴한 라우팅 모델이라 정책 항목이 될 수 없습니다. 현재 모델: ${model.replacedBy.join(", ")}.`,
        `'${model.id}' is a retired routing model and cannot be a policy entry. Current models: ${model.replacedBy.join(", ")}.`,
      ),
    };
  }
  if (model.kind === "parent") {
    return {
      ok: false,
      reason: "parent",
      message: text(
        `'${model.id}'은(는) 라우팅 부모 모델이라 정책 항목이 될 수 없습니다.`,
        `'${model.id}' is a routing parent model and cannot be a policy entry.`,
      ),
    };
  }
  if (!model.active)
    return {
      ok: false,
      reason: "inactive",
      message: text(
        `'${model.id}' 모델은 현재 사용할 수 없습니다.`,
        `The model '${model.id}' is currently unavailable.`,
      ),
    };
  if (model.modality !== "text") {
    return {
      ok: false,
      reason: "not_text",
      message: text(
        `'${model.id}'은(는) 채팅 모델이 아니라 정책 항목이 될 수 없습니다.`,
        `'${model.id}' is not a chat model and cannot be a policy entry.`,
      ),
    };
  }
  const offerings = getOfferings(snapshot, model.id).filter((o) => pin === null || o.providerId === pin);
  if (pin !== null && offerings.length === 0) {
    return {
      ok: false,
      reason: "bad_provider",
      message: text(
        `'${pin}' 제공자는 '${model.id}' 모델을 제공하지 않습니다.`,
        `The provider '${pin}' does not offer the model '${model.id}'.`,
      ),
    };
  }
  if (!offerings.some((o) => o.pricing !== null)) {
    return {
      ok: false,
      reason: "unpriced",
      message: text(`'${model.id}' 모델에는 단가가 없습니다.`, `The model '${model.id}' has no unit price.`),
    };
  }
  return { ok: true, model, pinnedProvider: pin };
}

const MODALITY_KO: Record<Modality, string> = { text: "채팅", embedding: "임베딩", video: "동영상" };
const MODALITY_EN: Record<Modality, string> = { text: "chat", embedding: "embedding", video: "video" };
const withArticle = (word: string) => `${/^[aeiou]/.test(word) ? "an" : "a"} ${word}`;

function withSuggestions(message: Text, suggestions: readonly string[]): Text {
  const list = suggestions.join(", ");
  return suggestions.length > 0
    ? text(`${message.ko} 비슷한 모델: ${list}`, `${message.en} Similar models: ${list}`)
    : message;
}

function modelNotFound(snapshot: CatalogSnapshot, id: string): GatewayError {
  const suggestions = suggestModels(snapshot, id);
  const message =
    suggestions.length > 0
      ? withSuggestions(text(`지원하지 않는 모델입니다: '${id}'.`, `The model is not supported: '${id}'.`), suggestions)
      : text(
          `지원하지 않는 모델입니다: '${id}'. 사용 가능한 모델은 GET /v1/models에서 확인하세요.`,
          `The model is not supported: '${id}'. See GET /v1/models for the available models.`,
        );
  return new GatewayError("model_not_found", message, { suggestions });
}

function retiredModel(model: CatalogModel): GatewayError {
  return new GatewayError(
    "model_not_found",
    text(
      `'${model.id}' 모델은 더 이상 제공되지 않습니다. 대신 ${model.replacedBy.join(", ")} 모델을 사용하세요.`,
      `The model '${model.id}' is no longer offered. Use ${model.replacedBy.join(", ")} instead.`,
    ),
    { suggestions: [...model.replacedBy] },
  );
}

function badPin(
  snapshot: CatalogSnapshot,
  model: CatalogModel,
  offerings: readonly CatalogOffering[],
  pin: string,
): GatewayError {
  const providers = offerings.map((o) => o.providerId);
  const suggestions = providers.map((p) => `${model.id}@${p}`).slice(0, 5);
  const head = getProvider(snapshot, pin)
    ? text(
        `'${pin}' 제공자는 '${model.id}' 모델을 제공하지 않습니다.`,
        `The provider '${pin}' does not offer the model '${model.id}'.`,
      )
    : text(`알 수 없는 제공자입니다: '${pin}'.`, `Unknown provider: '${pin}'.`);
  return new GatewayError(
    "model_not_found",
    text(
      `${head.ko} '${model.id}' 모델을 제공하는 제공자: ${providers.join(", ")}.`,
      `${head.en} Providers of '${model.id}': ${providers.join(", ")}.`,
    ),
    { suggestions },
  );
}
