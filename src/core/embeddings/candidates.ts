/**
 * Who may serve an embeddings call: the model's offerings (a `model@provider` pin narrows
 * them), narrowed by the key (BYOK), the account (training consent), this deployment
 * (unconfigured providers are skipped; none left is 503 `provider_not_configured`) and the
 * request itself (token ids, dimensions, the numbers its answer would hold: inputs ×
 * dimensions at most EMBEDDINGS_MAX_VALUES). Every refusal is thrown before any hold.
 */
import { GatewayError, text } from "../errors";
import type { KeyPrincipal } from "../auth/principal";
import { requireModality, resolveModel } from "../catalog/resolve";
import type { CatalogSnapshot } from "../catalog/types";
import { withoutRetired } from "../catalog/lifecycle";
import { lifecycleFor } from "../chat/lifecycle";
import { checkAllowed } from "../routing/allowed-models";
import { buildCandidates, type Candidate } from "../routing/candidates";
import type { Protocol } from "../model/provider";
import type { EmbeddingDeps, EmbeddingCall } from "./types";

const POLICY_REFUSED = text(
  "라우팅 정책은 채팅 모델만 호출합니다. 임베딩 모델을 지정하세요.",
  "Routing policies call chat models only. Name an embedding model.",
);

export function embeddingCandidates(
  snapshot: CatalogSnapshot,
  p: KeyPrincipal,
  call: EmbeddingCall,
  d: Pick<EmbeddingDeps, "available" | "embedderFor" | "lifecycle" | "maxValues">,
): Candidate[] {
  const resolved = resolveModel(snapshot, call.model);
  if (resolved.kind === "policy") throw new GatewayError("model_not_found", POLICY_REFUSED);
  requireModality(snapshot, resolved, "embedding");
  const resolution = withoutRetired(resolved, lifecycleFor(d, p));
  checkAllowed(snapshot, p, resolution);
  const max = resolution.model.dimensions;
  if (call.dimensions !== undefined && max !== null && call.dimensions > max) {
    throw new GatewayError(
      "unsupported_parameter",
      text(
        `'${resolution.model.id}' 모델의 dimensions는 ${max} 이하여야 합니다.`,
        `dimensions must be at most ${max} for the model '${resolution.model.id}'.`,
      ),
      { param: "dimensions" },
    );
  }
  // The work of one call, bounded before any hold: its answer holds inputs × dimensions numbers.
  const values = call.inputs.length * (call.dimensions ?? max ?? 3072);
  if (values > d.maxValues) {
    throw new GatewayError(
      "unsupported_parameter",
      text(
        `한 번의 임베딩 호출은 입력 수 × 차원(dimensions)이 ${d.maxValues} 이하여야 합니다 (요청: ${values}). 입력을 나누거나 dimensions를 줄이세요.`,
        `One embeddings call may answer at most ${d.maxValues} numbers (inputs × dimensions); this one asks for ${values}. Split the input or ask for fewer dimensions.`,
      ),
      { param: "input" },
    );
  }
  const available = d.available?.bind(d);
  const all = buildCandidates(snapshot, resolution, {
    consent: p.user.xborderTrainingConsent,
    byokProvider: p.kind === "byok" ? p.byokProvider : null,
    available,
  });
  const tokenIds = call.inputs.some((i) => typeof i !== "string");
  const usable = all.filter((c) => {
    const embedder = d.embedderFor(c.provider.protocol as Protocol);
    return embedder !== undefined && (!tokenIds || embedder.tokenInputs);
  });
  if (!usable.length) {
    throw new GatewayError(
      "unsupported_parameter",
      text(
        `'${resolution.model.id}' 모델은 토큰 ID 배열 입력을 받지 않습니다. 텍스트로 보내세요.`,
        `The model '${resolution.model.id}' does not take token-id inputs. Send text instead.`,
      ),
      { param: "input", providers: all.map((c) => c.provider.id) },
    );
  }
  return usable;
}
