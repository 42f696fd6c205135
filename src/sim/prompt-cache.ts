/**
 * Simulated prompt caching, deterministic so tests can assert it:
 *
 * - Automatic (OpenAI-compatible, Gemini): a request's cached tokens are those of its
 *   longest message prefix — the last message excluded — that an earlier request to the
 *   same provider and model also started with, if that prefix is at least 1024 tokens.
 * - Explicit (Anthropic): blocks up to a `cache_control` breakpoint form a prefix. The
 *   longest prefix an earlier request marked is read from the cache; the rest up to the
 *   last breakpoint is written. No minimum length.
 *
 * Prefixes are identified by a chained hash of each item's JSON, seeded with provider and
 * model, and stored in the simulator instance's state until `reset()`.
 */
import type { SimState } from "./state.ts";

/** Shortest prefix the automatic caches report (OpenAI's documented minimum). */
const AUTO_CACHE_MIN_TOKENS = 1024;

function seedFor(kind: string, provider: string, model: string): bigint {
  return Bun.hash.wyhash(`${kind}\0${provider}\0${model}`);
}

/**
 * Automatic prefix caching. `items` are the prompt's messages in order (JSON-serializable),
 * `itemTokens` their token counts. Returns the cached tokens to report, and records this
 * prompt's prefixes for later requests.
 */
export function automaticCachedTokens(
  sim: SimState,
  provider: string,
  model: string,
  items: readonly unknown[],
  itemTokens: readonly number[],
): number {
  let total = 0;
  for (const t of itemTokens) total += t;
  // Short prompts can neither hit nor seed a cache entry: skip the hashing entirely.
  if (total < AUTO_CACHE_MIN_TOKENS) return 0;
  let hash = seedFor("auto", provider, model);
  let prefixTokens = 0;
  let cached = 0;
  for (let i = 0; i < items.length; i++) {
    hash = Bun.hash.wyhash(JSON.stringify(items[i]) ?? "", hash);
    prefixTokens += itemTokens[i]!;
    if (prefixTokens < AUTO_CACHE_MIN_TOKENS) continue;
    const seen = sim.rememberPrefix(hash);
    if (seen && i < items.length - 1) cached = prefixTokens;
  }
  return cached;
}

/** One block of an explicitly cached prompt (a tool, a system block, a content block). */
export interface CacheBlock {
  /** The block's identity: its JSON without `cache_control`, plus its role where relevant. */
  key: string;
  tokens: number;
  /** Set when the block carries `cache_control`: its TTL bucket. */
  breakpoint?: "5m" | "1h";
}

export interface ExplicitCacheUsage {
  readTokens: number;
  /** Written tokens, by TTL bucket (Anthropic reports them in `cache_creation`). */
  write5mTokens: number;
  write1hTokens: number;
}

const NO_CACHE: ExplicitCacheUsage = { readTokens: 0, write5mTokens: 0, write1hTokens: 0 };

/**
 * Explicit (breakpoint) caching. A hit may be any block boundary up to the last breakpoint
 * that an earlier request marked — as Anthropic looks back from the breakpoint for the
 * longest cached prefix — so a conversation that moves its breakpoint forward reads the old
 * prefix and writes only the new part.
 */
export function explicitCacheUsage(
  sim: SimState,
  provider: string,
  model: string,
  blocks: readonly CacheBlock[],
): ExplicitCacheUsage {
  let last = -1;
  for (let i = 0; i < blocks.length; i++) if (blocks[i]!.breakpoint) last = i;
  if (last < 0) return NO_CACHE;

  let hash = seedFor("explicit", provider, model);
  let prefixTokens = 0;
  let readTokens = 0;
  const hashes: bigint[] = [];
  const cumulative: number[] = [];
  for (let i = 0; i <= last; i++) {
    hash = Bun.hash.wyhash(blocks[i]!.key, hash);
    prefixTokens += blocks[i]!.tokens;
    hashes.push(hash);
    cumulative.push(prefixTokens);
    if (sim.promptCache.has(hash)) readTokens = prefixTokens;
  }

  const usage = { readTokens, write5mTokens: 0, write1hTokens: 0 };
  let written = readTokens;
  for (let i = 0; i <= last; i++) {
    const bp = blocks[i]!.breakpoint;
    if (!bp) continue;
    sim.rememberPrefix(hashes[i]!);
    if (cumulative[i]! <= written) continue;
    const fresh = cumulative[i]! - written;
    if (bp === "1h") usage.write1hTokens += fresh;
    else usage.write5mTokens += fresh;
    written = cumulative[i]!;
  }
  return usage;
}
