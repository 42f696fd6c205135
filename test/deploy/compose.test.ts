/**
 * The deployment files hold together: docker-compose.yml (parsed here; `docker compose config`
 * too where the compose plugin exists), deploy/nginx.conf, the Dockerfile and .dockerignore.
 */
import { describe, expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { EnvSchema } from "../../src/config/schema";
import { loadConfig } from "../../src/config";

const ROOT = resolve(import.meta.dir, "../..");
const read = (p: string) => readFileSync(join(ROOT, p), "utf8");

interface Service {
  image?: string;
  build?: { context: string; args?: Record<string, string> } | string;
  environment?: Record<string, string>;
  ports?: string[];
  volumes?: string[];
  healthcheck?: { test: string[] | string };
  depends_on?: Record<string, { condition: string }>;
}
const compose = Bun.YAML.parse(read("docker-compose.yml")) as {
  services: Record<string, Service>;
  volumes?: Record<string, unknown>;
};
const services = compose.services;
const GATEWAYS = Object.keys(services).filter((s) => typeof services[s]!.build !== "undefined");

/** The compose file's `${NAME...}` interpolations with the example env file's values. */
const exampleEnv = Object.fromEntries(
  read("deploy/compose.env.example")
    .split("\n")
    .filter((l) => /^[A-Z_]+=/.test(l))
    .map((l) => [l.slice(0, l.indexOf("=")), l.slice(l.indexOf("=") + 1)]),
);
function interpolate(value: string): string {
  return value.replace(
    /\$\{([A-Z_]+)(?::([?-])([^}]*))?\}/g,
    (_m, name: string, op?: string, arg?: string) => exampleEnv[name] ?? (op === "-" ? (arg ?? "") : `<unset ${name}>`),
  );
}

/** Standard variables of the OpenTelemetry SDK, read by the tracing setup. */
const isStandard = (name: string) => name.startsWith("OTEL_");
const isProvider = (name: string) => /^[A-Z][A-Z0-9]*_(API_KEY|BASE_URL)$/.test(name);

describe("docker-compose.yml", () => {
  test("two gateways built from the Dockerfile, a load balancer, PostgreSQL, Redis, a trace collector", () => {
    expect(GATEWAYS.length).toBe(2);
    for (const g of GATEWAYS) {
      const b = services[g]!.build as { context: string };
      expect(b.context).toBe(".");
      expect(existsSync(join(ROOT, "Dockerfile"))).toBe(true);
    }
    for (const [name, s] of Object.entries(services)) expect([name, !!(s.image || s.build)]).toEqual([name, true]);
    expect(services.postgres!.image).toMatch(/^postgres:\d+/);
    expect(services.redis!.image).toMatch(/^redis:\d+/);
    expect(services.jaeger!.image).toMatch(/^jaegertracing\/all-in-one:/);
    expect(services.lb!.image).toMatch(/^nginx:/);
    expect(services.lb!.ports).toContain("8080:80");
  });

  test("every service has a health check; start order waits on health", () => {
    for (const [name, s] of Object.entries(services))
      expect([name, Array.isArray(s.healthcheck?.test) && s.healthcheck!.test.length > 1]).toEqual([name, true]);
    for (const g of GATEWAYS) {
      const d = services[g]!.depends_on!;
      expect(d.postgres?.condition).toBe("service_healthy");
      expect(d.redis?.condition).toBe("service_healthy");
      expect(d.jaeger).toBeDefined();
      expect(String(services[g]!.healthcheck!.test)).toContain("/readyz");
    }
    for (const g of GATEWAYS) expect(services.lb!.depends_on![g]?.condition).toBe("service_healthy");
  });

  test("gateway variables exist in the schema, point at the compose services, and validate", () => {
    const schemaNames = new Set(Object.keys(EnvSchema.properties));
    for (const g of GATEWAYS) {
      const env = services[g]!.environment!;
      for (const name of Object.keys(env))
        expect([name, schemaNames.has(name) || isProvider(name) || isStandard(name)]).toEqual([name, true]);
      expect(env.DATABASE_URL).toMatch(/@postgres:5432\//);
      expect(env.REDIS_URL).toBe("redis://redis:6379");
      expect(env.OTEL_EXPORTER_OTLP_ENDPOINT).toBe("http://jaeger:4318");
      // Secrets are placeholders the operator must fill, never values in the file.
      for (const secret of ["ADMIN_TOKEN", "JWT_SECRET", "BYOK_ENCRYPTION_KEY"])
        expect(env[secret]).toMatch(/^\$\{[A-Z_]+:\?[^}]+\}$/);
      expect(env.DATABASE_URL).toContain("${POSTGRES_PASSWORD:?");
      // With the example env file filled in, the gateway's own validation accepts it.
      const resolved = Object.fromEntries(Object.entries(env).map(([k, v]) => [k, interpolate(String(v))]));
      expect(Object.values(resolved).join(" ")).not.toContain("<unset");
      const cfg = loadConfig(resolved);
      expect(cfg.demoMode).toBe(false);
      // Outside demo mode nothing is simulated unless the operator says so: every provider's
      // credential can be passed, and the simulator is off by default.
      expect(cfg.simulator).toBe(false);
      const catalog = JSON.parse(read("src/core/catalog/catalog.json")) as { providers: { credential_env: string }[] };
      for (const p of [...catalog.providers.map((x) => x.credential_env), "BRAVE_API_KEY"])
        expect([p, env[p]]).toEqual([p, `\${${p}:-}`]);
    }
    expect(services.postgres!.environment!.POSTGRES_PASSWORD).toMatch(/^\$\{POSTGRES_PASSWORD:\?/);
  });

  test("the load balancer spreads requests round robin over both gateways, no stickiness", () => {
    expect(services.lb!.volumes).toContain("./deploy/nginx.conf:/etc/nginx/nginx.conf:ro");
    const conf = read("deploy/nginx.conf");
    for (const g of GATEWAYS) expect(conf).toMatch(new RegExp(`server ${g}:8080\\b`));
    expect(conf).not.toMatch(/^\s*(ip_hash|hash|sticky|least_conn)\b/m);
    expect(conf).toMatch(/proxy_buffering off;/); // streams relayed as they come
    expect(conf).toMatch(/proxy_set_header X-Forwarded-For/);
    for (const g of GATEWAYS) expect(services[g]!.environment!.TRUSTED_PROXIES).toBeTruthy();
  });

  test("`docker compose config` accepts it (where the compose plugin exists)", () => {
    let has = false;
    try {
      has = Bun.spawnSync(["docker", "compose", "version"], { stdout: "ignore", stderr: "ignore" }).success;
    } catch {} // no docker CLI at all
    if (!has) return; // no compose plugin here: the structural tests above stand in
    const r = Bun.spawnSync(["docker", "compose", "--env-file", "deploy/compose.env.example", "config", "-q"], {
      cwd: ROOT,
      stdout: "pipe",
      stderr: "pipe",
    });
    expect(r.stderr.toString()).toBe("");
    expect(r.success).toBe(true);
  });
});

describe("Dockerfile and .dockerignore", () => {
  const dockerfile = read("Dockerfile");

  test("a volume for /data, a readiness health check, no fetch limit left to the image", () => {
    expect(dockerfile).toMatch(/^VOLUME \/data$/m);
    const hc = dockerfile.slice(dockerfile.indexOf("HEALTHCHECK"));
    expect(hc).toMatch(/^HEALTHCHECK [^\n]*\\\n\s+CMD [^\n]*\/readyz/m);
    // The probe it runs is installed in the runtime stage.
    const runtime = dockerfile.slice(dockerfile.lastIndexOf("\nFROM "));
    if (/CMD curl/.test(hc)) expect(runtime).toMatch(/apt-get install[^\n]* curl/);
    expect(dockerfile).not.toContain("BUN_CONFIG_MAX_HTTP_REQUESTS=");
  });

  /** Docker's rule: the last pattern matching the path or one of its parents decides. */
  function ignored(path: string): boolean {
    const rules = read(".dockerignore")
      .split("\n")
      .map((l) => l.trim())
      .filter((l) => l && !l.startsWith("#"))
      .map((l) => (l.startsWith("!") ? { keep: true, glob: l.slice(1) } : { keep: false, glob: l }))
      .map((r) => ({ ...r, glob: new Bun.Glob(r.glob.replace(/^\/+|\/+$/g, "")) }));
    const parts = path.split("/");
    let out = false;
    for (const r of rules) {
      for (let i = 1; i <= parts.length; i++) {
        if (r.glob.match(parts.slice(0, i).join("/"))) {
          out = !r.keep;
          break;
        }
      }
    }
    return out;
  }

  test(".dockerignore keeps what the build copies and leaves the rest out", () => {
    const copied = [...dockerfile.matchAll(/^COPY (?!--from)(.+) \S+$/gm)].flatMap((m) => m[1]!.split(/\s+/));
    expect(copied).toContain("src");
    for (const p of [...copied, "src/main.ts", "src/core/catalog/catalog.json", "drizzle/meta/_journal.json"])
      expect([p, ignored(p)]).toEqual([p, false]);
    for (const p of [
      "node_modules",
      "node_modules/elysia/package.json",
      ".git",
      ".git/HEAD",
      "data",
      "data/pgdata",
      ".env",
      "bench/results/latest.md",
      "test/harness.ts",
      "dist/gateway",
      "deploy/compose.env",
      "src/node_modules/x",
    ]) {
      expect([p, ignored(p)]).toEqual([p, true]);
    }
  });
});
