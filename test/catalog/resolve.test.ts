import { describe, expect, test } from "bun:test";
import {
  checkPolicyEntryModel,
  classifyModel,
  offeringsOfModality,
  resolveModel,
  resolveModelFor,
  type ModelResolution,
} from "../../src/core/catalog/resolve";
import { editDistance, suggestModels } from "../../src/core/catalog/suggest";
import { getModel } from "../../src/core/catalog/types";
import { GatewayError } from "../../src/core/errors";
import { snapshotOf } from "./helpers";

const s = snapshotOf();

function failure(fn: () => unknown): GatewayError {
  try {
    fn();
  } catch (e) {
    if (e instanceof GatewayError) return e;
    throw e;
  }
  throw new Error("expected a GatewayError");
}

function leaf(r: ModelResolution) {
  if (r.kind !== "leaf") throw new Error(`expected a leaf, got ${r.kind}`);
  return r;
}

describe("resolveModel", () => {
  test("short id: the model with its offerings in default order", () => {
    const r = leaf(resolveModel(s, "deepseek-v3"));
    expect(r.model.id).toBe("deepseek-v3");
    expect(r.offerings.map((o) => o.providerId)).toEqual(["deepseek", "together"]);
    expect(r.pinnedProvider).toBeNull();
    expect(r.requested).toBe("deepseek-v3");
  });

  test("vendor form converts to the short id", () => {
    expect(leaf(resolveModel(s, "openai/gpt-4o-mini")).model.id).toBe("gpt-4o-mini");
    expect(leaf(resolveModel(s, "meta-llama/llama-3.3-70b")).model.id).toBe("llama-3.3-70b");
    expect(leaf(resolveModel(s, "veo/veo-3")).model.id).toBe("veo-3");
    expect(leaf(resolveModel(s, "GPT-4o")).model.id).toBe("gpt-4o");
  });

  test("model@provider pins one provider", () => {
    const r = leaf(resolveModel(s, "deepseek-v3@together"));
    expect(r.pinnedProvider).toBe("together");
    expect(r.offerings.map((o) => o.providerId)).toEqual(["together"]);
    expect(r.offerings[0]!.upstreamId).toBe("deepseek-ai/DeepSeek-V3");
    expect(leaf(resolveModel(s, "meta-llama/llama-3.3-70b@groq")).offerings[0]!.upstreamId).toBe(
      "llama-3.3-70b-versatile",
    );
  });

  test("pinning a provider that does not offer the model, or an unknown one, is 400", () => {
    const notOffered = failure(() => resolveModel(s, "deepseek-v3@groq"));
    expect(notOffered.status).toBe(400);
    expect(notOffered.message).toContain("groq");
    expect(notOffered.extras.suggestions).toEqual(["deepseek-v3@deepseek", "deepseek-v3@together"]);
    const unknown = failure(() => resolveModel(s, "gpt-4o@azure"));
    expect(unknown.status).toBe(400);
    expect(unknown.message).toContain("azure");
    expect(failure(() => resolveModel(s, "gpt-4o@")).status).toBe(400);
  });

  test("routing parents return their candidate leaves in order", () => {
    const r = resolveModel(s, "benchmark_smart");
    if (r.kind !== "parent") throw new Error("expected a parent");
    expect(r.model.id).toBe("benchmark_smart");
    expect(r.candidates.map((c) => c.model.id)).toEqual([...getModel(s, "benchmark_smart")!.candidates]);
    for (const c of r.candidates) {
      expect(c.model.kind).toBe("leaf");
      expect(c.offerings.length).toBeGreaterThan(0);
    }
    for (const id of ["analytics_smart", "perfect"]) expect(resolveModel(s, id).kind).toBe("parent");
    expect(failure(() => resolveModel(s, "perfect@openai")).status).toBe(400);
  });

  test("orch/<slug> and policy/<slug> go to the policy engine", () => {
    expect(resolveModel(s, "orch/my-fallback")).toEqual({
      kind: "policy",
      requested: "orch/my-fallback",
      prefix: "orch",
      slug: "my-fallback",
    });
    expect(resolveModel(s, "policy/abc")).toEqual({
      kind: "policy",
      requested: "policy/abc",
      prefix: "policy",
      slug: "abc",
    });
    const bad = failure(() => resolveModel(s, "orch/Not_A_Slug"));
    expect(bad.status).toBe(400);
    expect(bad.errorCode).toBe("policy_not_found");
  });

  test("retired parents are 400 naming the current parents (in Korean)", () => {
    const smart = failure(() => resolveModel(s, "pleum-smart"));
    expect(smart.status).toBe(400);
    expect(smart.errorCode).toBe("model_not_found");
    expect(smart.message).toContain("benchmark_smart");
    expect(smart.message).toContain("analytics_smart");
    expect(smart.message).toMatch(/[가-힣]/);
    expect(smart.extras.suggestions).toEqual(["benchmark_smart", "analytics_smart"]);
    const perfect = failure(() => resolveModel(s, "pleum-perfect"));
    expect(perfect.message).toContain("perfect");
    expect(perfect.extras.suggestions).toEqual(["perfect"]);
  });

  test("unknown ids: model_not_found with up to 5 close suggestions in the Korean message", () => {
    const e = failure(() => resolveModel(s, "gpt-4o-mni"));
    expect(e.status).toBe(400);
    expect(e.errorCode).toBe("model_not_found");
    expect(e.extras.suggestions![0]).toBe("gpt-4o-mini");
    expect(e.message).toContain("gpt-4o-mini");
    expect(e.message).toMatch(/[가-힣]/);

    const claude = failure(() => resolveModel(s, "claude")).extras.suggestions!;
    expect(claude).toHaveLength(5);
    expect(claude.every((id) => id.startsWith("claude-"))).toBe(true);
    const seedance = failure(() => resolveModel(s, "seedance")).extras.suggestions!;
    expect(seedance.length).toBe(5);
    expect(failure(() => resolveModel(s, "openai/gpt4o-mini")).extras.suggestions![0]).toBe("gpt-4o-mini");
    expect(failure(() => resolveModel(s, "zzzzzzzzzzzz")).extras.suggestions).toEqual([]);
    // Retired and inactive ids are never suggested.
    expect(failure(() => resolveModel(s, "pleum-smar")).extras.suggestions).not.toContain("pleum-smart");
  });

  test("suggestions are ordered by edit distance", () => {
    expect(editDistance("kitten", "sitting")).toBe(3);
    expect(editDistance("", "abc")).toBe(3);
    expect(suggestModels(s, "gemini-2.5-flsh")[0]).toBe("gemini-2.5-flash");
    expect(suggestModels(s, "veo3")[0]).toBe("veo-3");
  });

  test("the distance is exact for long strings and after a longer pair grew its rows", () => {
    expect(editDistance("a".repeat(300), "b".repeat(300))).toBe(300);
    expect(editDistance("flaw", "lawn")).toBe(2);
    expect(editDistance("x".repeat(200), "gpt-4o-mini")).toBe(200);
  });

  test("skipping ids ruled out by length alone changes no suggestion", () => {
    // The scan before it skipped anything: every distance computed in full.
    const reference = (query: string): string[] => {
      const q = query.trim().toLowerCase();
      const tail = q.includes("/") ? q.slice(q.lastIndexOf("/") + 1) : null;
      const scored: { id: string; score: number; distance: number }[] = [];
      for (const m of s.models) {
        if (!m.active || (m.kind !== "leaf" && m.kind !== "parent")) continue;
        const id = m.id.toLowerCase();
        const distance = Math.min(
          editDistance(q, id),
          editDistance(q, m.vendorId.toLowerCase()),
          tail ? editDistance(tail, id) : Infinity,
        );
        const needle = tail ?? q;
        const contains = needle.length >= 3 && (id.includes(needle) || needle.includes(id));
        const limit = Math.max(2, Math.floor(Math.max(needle.length, id.length) * 0.4));
        if (distance <= limit || contains)
          scored.push({ id: m.id, score: contains ? Math.min(distance, 1) : distance, distance });
      }
      scored.sort((a, b) => a.score - b.score || a.distance - b.distance || a.id.localeCompare(b.id));
      return scored.slice(0, 5).map((x) => x.id);
    };
    const queries = [
      "gpt",
      "gpt4o",
      "gpt-4o-mini-2024",
      "claude",
      "claude-sonnet-4.5",
      "anthropic/claude-sonet-4-5",
      "openai/gpt-4o-minii",
      "o3",
      "gemini",
      "deepseek/deepseek-v3@x",
      "text-embedding-3-smal",
      "x".repeat(200),
      "gpt-".repeat(50),
      `openai/${"gpt-4o".repeat(30)}`,
      ...s.models.slice(0, 40).map((m) => `${m.id}z`),
    ];
    let nonEmpty = 0;
    for (const q of queries) {
      const got = suggestModels(s, q);
      expect(got).toEqual(reference(q));
      if (got.length) nonEmpty++;
    }
    expect(nonEmpty).toBeGreaterThan(30);
  });
});

describe("modality", () => {
  test("chat rejects video ids and the video endpoint rejects chat ids (400)", () => {
    const chatVideo = failure(() => resolveModelFor(s, "veo-3", "text"));
    expect(chatVideo.status).toBe(400);
    expect(chatVideo.message).toContain("veo-3");
    const videoChat = failure(() => resolveModelFor(s, "gpt-4o", "video"));
    expect(videoChat.status).toBe(400);
    expect(failure(() => resolveModelFor(s, "benchmark_smart", "video")).status).toBe(400);
    expect(failure(() => resolveModelFor(s, "text-embedding-3-small", "text")).status).toBe(400);
    expect(resolveModelFor(s, "kling-v3", "video").kind).toBe("leaf");
    expect(resolveModelFor(s, "perfect", "text").kind).toBe("parent");
    expect(resolveModelFor(s, "orch/x", "text").kind).toBe("policy");
    expect(resolveModelFor(s, "text-embedding-3-small", "embedding").kind).toBe("leaf");
  });

  test("classifyModel and offeringsOfModality", () => {
    const c = (id: string) => classifyModel(getModel(s, id)!);
    expect(c("gpt-4o")).toBe("text");
    expect(c("text-embedding-3-small")).toBe("embedding");
    expect(c("veo-3-omni")).toBe("video");
    expect(c("benchmark_smart")).toBe("parent");
    expect(c("pleum-perfect")).toBe("retired");
    const text = offeringsOfModality(s, s.offerings, "text");
    expect(text.length).toBeGreaterThan(0);
    expect(text.every((o) => getModel(s, o.modelId)!.modality === "text")).toBe(true);
    expect(offeringsOfModality(s, s.offerings, "video").map((o) => o.providerId)).not.toContain("openai");
  });
});

describe("checkPolicyEntryModel", () => {
  test("active priced text leaves are accepted; policies, parents, retired and unknown ids are not", () => {
    expect(checkPolicyEntryModel(s, "gpt-4o-mini").ok).toBe(true);
    expect(checkPolicyEntryModel(s, "anthropic/claude-haiku-4-5").ok).toBe(true);
    const pinned = checkPolicyEntryModel(s, "deepseek-v3@together");
    expect(pinned.ok && pinned.pinnedProvider).toBe("together");
    const reason = (id: string) => {
      const r = checkPolicyEntryModel(s, id);
      return r.ok ? "ok" : r.reason;
    };
    expect(reason("policy/other")).toBe("policy");
    expect(reason("orch/other")).toBe("policy");
    expect(reason("benchmark_smart")).toBe("parent");
    expect(reason("perfect")).toBe("parent");
    expect(reason("pleum-smart")).toBe("retired");
    expect(reason("no-such-model")).toBe("not_found");
    expect(reason("veo-3")).toBe("not_text");
    expect(reason("deepseek-v3@groq")).toBe("bad_provider");
  });
});
