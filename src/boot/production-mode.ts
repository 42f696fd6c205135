/**
 * Imported by src/main.ts before any module that loads Elysia: a gateway started by its own
 * entry runs Elysia in production mode unless the operator names another (NODE_ENV or ENV).
 *
 * Elysia reads the mode once, when it loads. Outside production a refused body's
 * ValidationError builds, before our own error handler sees it, an example value of the whole
 * schema and the list of every error, pretty-printed with the body it refused (in production
 * it still copies the body, compactly), and Bun.serve runs in development mode. That made a 422 cost 17.9 KiB and a third of the throughput of production mode
 * (bench/alloc.ts --refused=body) for a message the gateway never sends: it renders its own
 * (src/http/errors.ts). Tests run under NODE_ENV=test and keep Elysia's default.
 */
export function productionMode(env: Record<string, string | undefined> = process.env): void {
  // Elysia's own test: (NODE_ENV ?? ENV) === "production".
  if (env.NODE_ENV === undefined && env.ENV === undefined) env.ENV = "production";
}

productionMode();
