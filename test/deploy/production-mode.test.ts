/**
 * The gateway's own entry runs Elysia in production mode unless the operator names a mode: a
 * refused body then costs Elysia no example value of its schema and no list of every error
 * (pretty-printed with the body) before the gateway renders its own 422. Each case runs in a process of its own, as
 * Elysia reads the mode once, when it loads.
 */
import { expect, test } from "bun:test";
import { join } from "node:path";

const PROBE = join(import.meta.dir, "production-mode-probe.ts");

function probe(extra: Record<string, string>): { detailed: boolean; env: string | null } {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && k !== "NODE_ENV" && k !== "ENV") env[k] = v;
  const r = Bun.spawnSync([process.execPath, PROBE], { env: { ...env, ...extra } });
  expect(r.exitCode).toBe(0);
  return JSON.parse(r.stdout.toString().trim());
}

test("with no mode named, Elysia runs in production: a refused body builds no development details", () => {
  expect(probe({})).toEqual({ detailed: false, env: "production" });
});

test("a mode the operator names is kept: under NODE_ENV=development Elysia builds its details", () => {
  expect(probe({ NODE_ENV: "development" })).toEqual({ detailed: true, env: null });
  expect(probe({ ENV: "staging" })).toEqual({ detailed: true, env: "staging" });
});
