/**
 * The decision cores of the six engines: a policy, its callable entries and the request in, a
 * route out (which models in which order, or the cascade's tiers, or the parallel pool). Pure
 * apart from the injected randomness and the live latency tracker.
 */
import type { ChatRequest } from "../model/types";
import { rankByBenchmark, type BenchmarkTable } from "./benchmarks";
import { classifyMessages, type Category } from "./classify";
import type { LatencyTracker } from "./latency";
import { shouldFanOut } from "./parallel";
import type { Policy, PolicyEntry, PolicyRoute, RouteEntry, RouteShape } from "./types";
import { entryKeys, rankWeighted } from "./weighted";

export interface DecideContext {
  traceId: string | undefined;
  request: Omit<ChatRequest, "model">;
  benchmarks: BenchmarkTable;
  latency: LatencyTracker;
  random: () => number;
}

/** Decides one call of `policy` over `entries` (its entries still callable in the catalog). */
export function decideRoute(policy: Policy, entries: readonly PolicyEntry[], ctx: DecideContext): PolicyRoute {
  const config = policy.config;
  const limits = config.limits ?? {};
  const facts: string[] = [];
  let category: Category | null = null;
  let shape: RouteShape;
  const models = entries.map((e) => e.model);
  const pick = (order: number[], retries: (e: PolicyEntry) => number | null): RouteEntry[] =>
    order.map((i) => ({ model: entries[i]!.model, retries: retries(entries[i]!) }));
  const ordinary = () => null; // the chat default (2 retries per provider)

  switch (policy.policyType) {
    case "fallback": {
      shape = { kind: "single", entries: entries.map((e) => ({ model: e.model, retries: e.retries })) };
      break;
    }
    case "weighted": {
      const sticky = ctx.traceId !== undefined && ctx.traceId !== "";
      const seed = sticky ? ctx.traceId! : ctx.random().toString(36);
      const keys = entryKeys(models);
      const order = rankWeighted(
        entries.map((e, i) => ({ key: keys[i]!, weight: e.weight ?? 1 })),
        seed,
      );
      facts.push(`trace=${sticky ? "sticky" : "random"}`);
      shape = { kind: "single", entries: pick(order, ordinary) };
      break;
    }
    case "latency": {
      const lc = config.latency ?? {};
      const r = ctx.latency.rank(models, lc.metric ?? "blend", lc.exploration ?? 0.05, ctx.random);
      facts.push(r.unmeasured ? "measured=no" : `ms=${r.scoreMs}`);
      if (r.explored) facts.push("explored=yes");
      shape = { kind: "single", entries: pick(r.order, ordinary) };
      break;
    }
    case "auto": {
      const c = classifyMessages(ctx.request.messages);
      category = c.category;
      const r = rankByBenchmark(ctx.benchmarks, models, category);
      facts.push(`category=${category}`);
      if (r.topScore !== null) facts.push(`score=${r.topScore}`);
      shape = { kind: "single", entries: pick(r.order, ordinary) };
      break;
    }
    case "cascade": {
      category = classifyMessages(ctx.request.messages).category;
      const hard = config.hard_categories?.includes(category) ?? false;
      const start = hard ? entries.length - 1 : 0;
      facts.push(`category=${category}`);
      if (hard) facts.push("hard=yes");
      shape = {
        kind: "cascade",
        tiers: entries.map((e) => ({ model: e.model, retries: e.retries })),
        start,
        check: config.response_check ?? {},
        judge: config.judge_model ?? null,
      };
      break;
    }
    case "parallel": {
      category = classifyMessages(ctx.request.messages).category;
      const fan = entries.length > 1 && shouldFanOut(category, config.deep_categories, ctx.request);
      facts.push(`category=${category}`);
      const synth =
        config.synthesis === undefined
          ? { model: entries[0]!.model }
          : typeof config.synthesis === "string"
            ? { model: config.synthesis }
            : config.synthesis;
      shape = fan
        ? { kind: "parallel", workers: entries.map((e) => ({ model: e.model, retries: null })), synthesis: synth }
        : { kind: "single", entries: entries.map((e) => ({ model: e.model, retries: null })) };
      if (!fan) facts.push("fanout=no");
      break;
    }
  }

  // max_escalations: how far past the first entry (or the starting tier) a call may move.
  if (limits.max_escalations !== undefined) {
    if (shape.kind === "single") shape = { ...shape, entries: shape.entries.slice(0, 1 + limits.max_escalations) };
    else if (shape.kind === "cascade")
      shape = { ...shape, tiers: shape.tiers.slice(0, shape.start + 1 + limits.max_escalations) };
  }

  return {
    policyId: policy.id,
    slug: policy.slug,
    engine: policy.policyType,
    category,
    shape,
    prefs: config.routing_prefs,
    limits,
    facts,
  };
}

/** The `X-Policy-Decision` header: `<engine>; policy=<slug>; key=value; ...` (ASCII only). */
export function decisionHeader(route: Pick<PolicyRoute, "engine" | "slug">, facts: readonly string[]): string {
  return [route.engine, `policy=${route.slug}`, ...facts].join("; ").replace(/[^\x20-\x7e]/g, "?");
}
