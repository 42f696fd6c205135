/**
 * A gateway on a catalog with lifecycle dates and aliases, on a pinned day (CATALOG_TODAY
 * 2026-12-01), for the lifecycle tests of every dialect. OpenAI is reached through a recording
 * proxy with a base URL of its own, so its offerings are real upstreams (not simulated): its
 * retired models are refused; so is Kling (a base URL of its own that nothing listens on: a
 * refusal never reaches it). The other providers are served by the simulator: a retired model
 * of theirs keeps answering (the demo exception), with the deprecation headers.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll } from "bun:test";
import { formatHashFile } from "../../src/core/catalog/verify";
import { startTestGateway, type TestGateway } from "../harness";
import { RecordingProxy } from "../support/chat";
import { model, mutated } from "./helpers";

export const TODAY = "2026-12-01";

/** The lifecycle of the test catalog, model by model. */
export const LIFECYCLE: Record<string, object> = {
  // Retired on a real upstream: refused.
  "gpt-4o": {
    deprecated_at: "2026-06-01",
    retires_at: "2026-11-30",
    successor: "gpt-4o-mini",
    aliases: ["gpt-4o-2024-08-06"],
  },
  "text-embedding-3-large": {
    deprecated_at: "2026-10-01",
    retires_at: "2026-11-15",
    successor: "text-embedding-3-small",
  },
  "kling-v2-6": { deprecated_at: "2026-09-01", retires_at: "2026-10-01", successor: "kling-v3" },
  // Retired, but served by the simulator: answers with the warning.
  "seedance-1-0-pro": { deprecated_at: "2026-09-01", retires_at: "2026-11-01", successor: "seedance-2-0" },
  "claude-sonnet-4-5": {
    deprecated_at: "2026-09-29",
    retires_at: "2026-11-30",
    successor: "claude-haiku-4-5",
    aliases: ["claude-sonnet-4-5-20250929"],
  },
  // Deprecated: answers with the warning.
  "gemini-2.5-flash": {
    deprecated_at: "2026-11-01",
    retires_at: "2027-03-01",
    successor: "gemini-2.5-pro",
    aliases: ["gemini-2.5-flash-latest"],
  },
  "gemini-embedding-001": { deprecated_at: "2026-11-20", retires_at: null, successor: "text-embedding-3-small" },
  // Deprecation announced for a later day: active today.
  "gpt-4o-mini": {
    deprecated_at: "2027-01-01",
    retires_at: "2027-06-01",
    successor: null,
    aliases: ["gpt-4o-mini-2024-07-18"],
  },
  "claude-haiku-4-5": { aliases: ["claude-haiku-4-5-20251001", "claude-haiku-4-5-latest"] },
};

export interface LifecycleGateway {
  g: () => TestGateway;
  proxy: () => RecordingProxy;
}

/** A suite's gateway on the lifecycle catalog, started before its tests and stopped after. */
export function lifecycleGateway(env: Record<string, string> = {}): LifecycleGateway {
  let g: TestGateway | undefined;
  let proxy: RecordingProxy | undefined;
  const dir = mkdtempSync(join(tmpdir(), "catalog-life-"));
  beforeAll(async () => {
    const text = mutated((d) => {
      // Only this file's lifecycle and aliases, whatever the shipped catalog says today.
      for (const m of d.models) for (const f of ["deprecated_at", "retires_at", "successor", "aliases"]) delete m[f];
      for (const [id, fields] of Object.entries(LIFECYCLE)) Object.assign(model(d, id), fields);
      model(d, "perfect").candidates = ["claude-sonnet-4-5", "gemini-2.5-pro", "gpt-4o"];
    });
    const path = join(dir, "catalog.json");
    writeFileSync(path, text);
    writeFileSync(join(dir, "catalog.sha256"), formatHashFile(text));
    proxy = new RecordingProxy();
    g = await startTestGateway({
      env: {
        CATALOG_PATH: path,
        CATALOG_TODAY: TODAY,
        OPENAI_BASE_URL: proxy.url,
        KLING_BASE_URL: "http://127.0.0.1:9",
        ...env,
      },
    });
    if (g.gw.sim) proxy.aim(g.gw.sim.baseUrl("openai"));
  }, 60_000);
  afterAll(async () => {
    await g?.stop();
    proxy?.stop();
    rmSync(dir, { recursive: true, force: true });
  });
  return {
    g: () => g!,
    proxy: () => proxy!,
  };
}

/** Every money trace of a user in SQL: holds, ledger entries, usage events, balance. */
export async function booksOf(g: TestGateway, userId: string) {
  await g.gw.settlements.quiesce();
  const db = g.gw.deps.db;
  const [u] = await db.query<any>(`select balance_micro, held_micro from users where id = $1`, [userId]);
  const holds = await db.query<any>(`select id, status from holds where user_id = $1`, [userId]);
  const entries = await db.query<any>(`select kind, amount_micro from ledger_entries where user_id = $1`, [userId]);
  const events = await db.query<any>(`select request_id, model, status from usage_events where user_id = $1`, [userId]);
  return {
    balance: BigInt(u.balance_micro),
    held: BigInt(u.held_micro),
    holds,
    charges: entries.filter((e: any) => e.kind === "charge"),
    events,
  };
}
