/**
 * What `reasoning_mode: "pro"` turns a model into, and whether the key's `allowed_models`
 * (routing/allowed-models.ts) allows that model too. Pure functions of the catalog snapshot.
 */
import { GatewayError, text } from "../errors";
import type { KeyPrincipal } from "../auth/principal";
import { resolveModel, type ModelResolution } from "../catalog/resolve";
import { allows } from "../routing/allowed-models";
import type { CatalogSnapshot } from "../catalog/types";
import type { ChatRequest, ReasoningEffort } from "../model/types";

/**
 * `reasoning_mode: "pro"`: the model's documented pro variant, or its highest reasoning
 * effort; a model without a pro mode is a 400 that names the models which have one.
 * A variant is another model: the key must allow it by itself (the allowance of the model
 * named in the request does not extend to it), else the call is 400 `model_not_allowed`;
 * `cacheModel` is then the id the response cache keys its answer by.
 */
export function applyProMode(
  snapshot: CatalogSnapshot,
  p: KeyPrincipal,
  r: Exclude<ModelResolution, { kind: "policy" }>,
  request: Omit<ChatRequest, "model">,
) {
  const pro = r.model.reasoningPro;
  if (!pro) {
    const supported = snapshot.models.filter((m) => m.reasoningPro && m.active && m.kind === "leaf").map((m) => m.id);
    throw new GatewayError(
      "reasoning_mode_unsupported",
      text(
        `'${r.model.id}' 모델은 pro 추론 모드를 지원하지 않습니다. 지원 모델: ${supported.join(", ")}.`,
        `The model '${r.model.id}' does not support the pro reasoning mode. Supported models: ${supported.join(", ")}.`,
      ),
      { suggestions: supported },
    );
  }
  if ("variant" in pro && pro.variant) {
    const v = resolveModel(snapshot, pro.variant);
    if (v.kind === "policy") throw new GatewayError("reasoning_mode_unsupported");
    if (!allows(snapshot, p, v)) {
      throw new GatewayError(
        "model_not_allowed",
        text(
          `'${r.model.id}'의 pro 추론 모드는 '${v.model.id}' 모델로 실행되는데, 이 키로는 '${v.model.id}' 모델을 호출할 수 없습니다.`,
          `The pro reasoning mode of '${r.model.id}' runs on '${v.model.id}', which this key cannot call.`,
        ),
      );
    }
    return { resolution: v, request, cacheModel: v.model.id };
  }
  return {
    resolution: r,
    request: { ...request, reasoning_effort: (pro as { effort: ReasoningEffort }).effort },
    cacheModel: undefined,
  };
}
