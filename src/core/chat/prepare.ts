/**
 * Everything of a chat call before its upstream call (ChatService.run): the model resolved and
 * authorized, the candidates (or a routing policy's execution), the hold sized and placed, the
 * response cache asked, PII masked, and the web search run. A client's 4xx is thrown here,
 * before any money moves. Also the input-token count of count_tokens, which resolves alike.
 */
import { GatewayError, text } from "../errors";
import type { KeyPrincipal } from "../auth/principal";
import { resolveModel, requireModality } from "../catalog/resolve";
import { withoutRetired } from "../catalog/lifecycle";
import { lifecycleFor } from "./lifecycle";
import type { HoldRequest, UsageEvent } from "../billing/ledger";
import { wantsHedge } from "./hedge";
import { applyProMode } from "./access";
import { checkAllowed } from "../routing/allowed-models";
import type { ChatCaller, ChatOptions, ChatPlan, Prepared } from "./plan";
import { buildCandidates, type Candidate, type CandidateOptions, type ProviderPrefs } from "../routing/candidates";
import { responsesOnlyCheck } from "./responses-native";
import { holdInputTokens, measureNative, measurePrompt, type PromptSize } from "./estimate";
import { checkedFor, parseServerTools, serverSearchHoldMicro, serverToolInput } from "./server-tools";
import { searchBeforeCall } from "./web-search-step";
import type { CachedAnswer, ChatDeps } from "./ports";
import { buildExecution, type PolicyExecution } from "../routing/execution";
import { mergePrefs } from "../routing/prefs";
import type { ChatRequest } from "../model/types";
import { placeHold, startHold, worstHoldMicro } from "./hold";
import { pricedOptionsOf } from "../routing/priced-options";
import { providerCount } from "./count";
import { Continuation, continuable } from "./continuation";
import { continuationHold } from "./continuation-bill";
import type { CallBill } from "./call-bill";
import { traced, tracedHold } from "./traced";
import { swallowed } from "../../lib/log";

/** Everything before the upstream call. Throws the client's 4xx before any money moves. */
export async function prepareCall(d: ChatDeps, bill: CallBill, caller: ChatCaller, o: ChatOptions): Promise<Prepared> {
  const snapshot = d.catalog();
  const p = caller.principal;
  caller.trace?.requested(o.model);
  let request = o.request;
  const lifecycle = lifecycleFor(d, p);
  let resolution = resolveModel(snapshot, o.model);
  requireModality(snapshot, resolution, "text");
  resolution = withoutRetired(resolution, lifecycle);
  checkAllowed(snapshot, p, resolution);

  // The cache keys an answer by the model it came from: a pro variant is its own model.
  let cacheModel = o.model;
  if (o.reasoningMode === "pro" && resolution.kind !== "policy")
    ({ resolution, request, cacheModel = o.model } = applyProMode(snapshot, p, resolution, request));
  // A pro variant is a model of its own, with its own lifecycle.
  resolution = withoutRetired(resolution, lifecycle);

  // Personal data is masked in what leaves: the messages and the client's own Anthropic body
  // alike (one mapping), so a native call still goes as the client's body. Nothing found: the
  // same request, not copied.
  const { request: upstream, mapping } =
    p.piiMaskingEnabled && d.pii ? d.pii.maskRequest(request) : { request, mapping: null };

  // The hold is an upper bound of the charge: everything the request sends (masked), per provider.
  // An Anthropic upstream gets a Messages client's own body, measured as such (once, when a
  // candidate that relays it is first sized), with what its server tools may add
  // (server-tools.ts); one that cannot be priced is refused (400) there, before any hold.
  const prompt = measurePrompt(upstream, o.web);
  const sized: { native?: PromptSize } = {};
  const serverTools = parseServerTools(upstream.anthropic);
  const inputFor = (c: Candidate) => {
    const translated = holdInputTokens(prompt, c.provider.protocol, c.offering.upstreamId);
    if (!upstream.anthropic || c.provider.protocol !== "anthropic") return translated;
    sized.native ??= measureNative(upstream.anthropic.body);
    const sent = Math.max(translated, holdInputTokens(sized.native, "anthropic", c.offering.upstreamId));
    return serverToolInput(sent, checkedFor(serverTools, c.offering), c.offering, upstream.anthropic.beta);
  };
  let candidates: Candidate[];
  let policy: PolicyExecution | null = null;
  if (resolution.kind === "policy") {
    if (!d.policies)
      throw new GatewayError(
        "policy_not_found",
        text(
          `라우팅 정책 '${resolution.slug}'을(를) 찾을 수 없습니다.`,
          `Routing policy '${resolution.slug}' not found.`,
        ),
      );
    const route = await d.policies.route({
      userId: p.user.id,
      slug: resolution.slug,
      traceId: o.traceId,
      request,
      snapshot,
    });
    policy = buildExecution({
      route,
      snapshot,
      candidateOptions: candidateOptions(d, p, request, mergePrefs(route.prefs, o.prefs)),
      lifecycle,
      inputTokens: inputFor,
      maxTokens: request.max_tokens,
      fxMilli: d.fxMilli,
      free: p.kind === "byok",
    });
    candidates =
      policy.kind === "single"
        ? policy.candidates
        : (policy.kind === "cascade" ? policy.tiers : policy.workers).flatMap((g) => g.candidates);
  } else {
    candidates = buildCandidates(snapshot, resolution, candidateOptions(d, p, request, o.prefs));
  }
  // A Responses-only offering takes a Responses call only; refused before any hold.
  candidates = responsesOnlyCheck(candidates, !!request.responses);
  const relaying = upstream.anthropic ? candidates.filter((c) => c.provider.protocol === "anthropic") : [];
  for (const c of relaying) checkedFor(serverTools, c.offering);

  // Without a search engine the plugin cannot run: refused before any hold, unless optional.
  if (o.web && !d.search && !o.web.optional) {
    throw new GatewayError(
      "provider_not_configured",
      text(
        "웹 검색 제공자(Brave Search)가 이 배포에 설정되지 않았습니다. 웹 플러그인을 빼거나 optional: true로 보내세요.",
        "The web search provider (Brave Search) is not configured on this deployment. Leave out the web plugin or send it with optional: true.",
      ),
      { providers: ["brave"] },
    );
  }
  const byok = p.kind === "byok";
  let holdTokens = candidates.reduce((m, c) => Math.max(m, inputFor(c)), 0) + request.max_tokens;
  // A policy's hold covers its worst case: every tier, judge, worker and merge that may run.
  let holdMicro = byok
    ? 0n
    : policy
      ? policy.holdMicro
      : worstHoldMicro(candidates, inputFor, request.max_tokens, d.fxMilli);
  // A stream that may be continued holds for its continuation too (continuation-bill.ts).
  const continues = continuable(o.stream, o.prefs, request) && (!policy || policy.kind === "single");
  if (continues) {
    const extra = continuationHold(candidates, inputFor, request.max_tokens, d.fxMilli);
    if (!byok) holdMicro += extra.micro;
    holdTokens += extra.tokens;
  }
  // A hedged call may also pay a cancelled loser's input (docs/hedging.md): held on top, the
  // dearest input of any candidate, so the charge is never capped below it.
  const hedging = wantsHedge(o.prefs, p.hedge);
  const hedge = hedging.hedge && !byok && (!policy || policy.kind === "single") && candidates.length > 1;
  if (hedge) holdMicro += worstHoldMicro(candidates, inputFor, 0, d.fxMilli);
  // The gateway's own web search (the plugin), and the provider's (server tools): each search held at its price.
  let searchMicro = o.web && d.search ? (d.searchPriceMicro ?? 0n) : 0n;
  if (!byok && serverTools.searches > 0)
    searchMicro += serverSearchHoldMicro(
      relaying.map((c) => c.offering),
      serverTools,
      d.fxMilli,
    );
  // A single call without web search settles once with its usage event: it may be held against a credit lease.
  const single = !o.web && (!policy || policy.kind === "single");
  const named = caller.clientChosen === true;
  const hold: HoldRequest = {
    id: caller.requestId,
    userId: p.user.id,
    keyId: p.keyId,
    amountMicro: holdMicro + searchMicro,
    tokens: holdTokens,
    ttlSeconds: d.holdTtlSeconds,
    leasable: single && !byok && !named,
  };
  // A call its client named claims that id in the database before anything may answer it:
  // the hold is the claim (one per id and account), so a reused id is refused (409) before
  // the cache, its embedding or a provider is asked. Such a call is never held against a
  // lease (a lease's calls are checked in memory only) nor alongside the upstream call.
  if (named) await traced(caller.trace, "hold", placeHold(d.ledger, d.settlements, hold));

  // An answer grounded in a fresh web search is neither served from nor stored in the cache.
  // A BYOK key pays nothing here, so it gets no embeddings at our cost: it matches exactly.
  const cacheMode = o.web
    ? "off"
    : p.kind === "byok" && p.responseCacheMode === "semantic"
      ? "exact"
      : p.responseCacheMode;
  // A hit is free: its usage is recorded, and a hold placed for the call goes back in full.
  // (The closures below are made on a hit only: every call passes here.)
  // Exact matching only reads the database: a hit needs no credits (unless the call claimed its id).
  const exactHit =
    cacheMode !== "off" && d.cache ? await d.cache.lookup(p.keyId, cacheMode, cacheModel, request, "exact") : null;
  if (exactHit)
    return cachedHit(
      bill,
      caller,
      exactHit,
      named
        ? (e) => d.ledger.release(caller.requestId, e)
        : (e) => d.ledger.record(caller.requestId, p.user.id, p.keyId, e),
    );

  // The hold's round trip overlaps the upstream call when the ledger's last answers for this
  // key leave room for it: nothing of the answer reaches the client before the hold is placed,
  // and a refused hold aborts the call (raceHold). Otherwise the hold goes first, as does
  // every call that pays someone else first (web search) or runs several calls (cascade, parallel).
  // Matching by similarity embeds the prompt, an upstream call we pay for: only after the hold.
  const similar = cacheMode === "semantic" && d.cache;
  const { pending: pendingHold } = named
    ? { pending: null }
    : await tracedHold(caller.trace, startHold(d.ledger, d.settlements, hold, { overlap: single && !similar }));
  const hit = similar ? await similar.lookup(p.keyId, cacheMode, cacheModel, request, "similar") : null;
  if (hit) return cachedHit(bill, caller, hit, (e) => d.ledger.release(caller.requestId, e));
  d.keeper?.keep(caller.requestId); // until its settle or release starts
  const plan: ChatPlan = {
    caller,
    requested: cacheModel,
    candidates,
    request,
    upstream,
    mapping,
    holdMicro: hold.amountMicro,
    holdTokens,
    prompt,
    ...sized,
    byok,
    cacheMode,
    startedAt: performance.now(),
    policy,
    search: null,
    pendingHold,
    reasoningHint: o.reasoningHint === true,
    hedge,
    ...(hedging.ignored
      ? {
          notes: [
            {
              type: "unsupported-setting" as const,
              setting: "provider.hedge",
              provider: "gateway",
              details: "hedging is off for this API key; its owner turns it on in the key's settings (hedge: true)",
            },
          ],
        }
      : undefined),
    ...(continues ? { continuation: new Continuation() } : undefined),
  };
  if (o.web) await searchBeforeCall(plan, o.web, searchMicro, d.search, (err) => bill.fail(plan, err));
  return { kind: "plan", plan };
}

/**
 * The input tokens of a request (count_tokens), the model resolved and authorized for the key
 * as for a call: the first provider's own count where it offers one (count.ts), else the
 * hold's estimate, the largest over the providers that may answer (a routing policy: the
 * Anthropic estimate). `source` is the counting provider's id or `estimate`. Nothing is held.
 * `upstream` false (an account without credit, http/count-tokens-guard.ts): the estimate only.
 */
export async function countInput(
  d: ChatDeps,
  p: KeyPrincipal,
  model: string,
  request: Omit<ChatRequest, "model">,
  signal?: AbortSignal,
  upstream = true,
): Promise<{ tokens: number; source: string }> {
  const snapshot = d.catalog();
  let resolution = resolveModel(snapshot, model);
  requireModality(snapshot, resolution, "text");
  resolution = withoutRetired(resolution, lifecycleFor(d, p));
  checkAllowed(snapshot, p, resolution);
  const prompt = measurePrompt(request);
  const estimate = { tokens: holdInputTokens(prompt, "anthropic", ""), source: "estimate" };
  if (resolution.kind === "policy") return estimate;
  const candidates = buildCandidates(snapshot, resolution, candidateOptions(d, p, request));
  const first = candidates[0];
  const counted = first && upstream ? await providerCount(d, p, first, request, signal) : null;
  if (counted !== null) return { tokens: counted, source: first!.provider.id };
  return candidates.length
    ? {
        ...estimate,
        tokens: Math.max(...candidates.map((c) => holdInputTokens(prompt, c.provider.protocol, c.offering.upstreamId))),
      }
    : estimate;
}

/** A response-cache hit: free; `close` records it (and gives back the hold, if one was placed). */
async function cachedHit(
  bill: CallBill,
  caller: ChatCaller,
  hit: CachedAnswer,
  close: (e: UsageEvent) => Promise<unknown>,
): Promise<Prepared> {
  await close(bill.event(caller, hit.model, hit.provider, hit.result.usage, 200, true)).catch(
    swallowed("cache hit's usage record", { request_id: caller.requestId }),
  );
  caller.trace?.answered(hit.model, hit.provider, hit.result.usage, 0, { cached: true });
  return {
    kind: "cached",
    outcome: {
      result: hit.result,
      model: hit.model,
      provider: hit.provider,
      cost: bill.costOf(0n),
      cached: true,
    },
  };
}

/** Each deps' `available`, bound once rather than on every call. */
const boundAvailable = new WeakMap<ChatDeps, NonNullable<CandidateOptions["available"]>>();

export function candidateOptions(
  d: ChatDeps,
  p: KeyPrincipal,
  request: Omit<ChatRequest, "model">,
  prefs?: ProviderPrefs,
) {
  let available = boundAvailable.get(d);
  if (available === undefined && d.available) boundAvailable.set(d, (available = d.available.bind(d)));
  return {
    prefs,
    consent: p.user.xborderTrainingConsent,
    byokProvider: p.kind === "byok" ? p.byokProvider : null,
    latencyOf: d.latencyOf,
    priced: pricedOptionsOf(request),
    available,
  };
}
