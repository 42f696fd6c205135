/**
 * The physical-limit baseline: a bare Bun `fetch` passthrough in front of the simulator,
 * doing nothing a gateway must do (no auth, no parsing, no billing). Whatever the gateway
 * adds beyond this proxy is the cost of its own work, not of Bun's HTTP client and server.
 *
 *   PROXY_PORT=8091 UPSTREAM=http://127.0.0.1:8090/sim bun bench/proxy.ts
 *
 * The path names the provider (`/openai/v1/chat/completions`, `/anthropic/v1/messages`); the
 * credential headers of both protocols are passed on.
 */
const upstream = (process.env.UPSTREAM ?? "").replace(/\/+$/, "");
if (!upstream) throw new Error("UPSTREAM is required (e.g. http://127.0.0.1:8090/sim)");

const server = Bun.serve({
  port: Number(process.env.PROXY_PORT ?? 0),
  hostname: "127.0.0.1",
  idleTimeout: 255,
  async fetch(req) {
    const path = req.url.slice(req.url.indexOf("/", 8));
    const up = await fetch(upstream + path, {
      method: req.method,
      headers: {
        "content-type": req.headers.get("content-type") ?? "application/json",
        authorization: req.headers.get("authorization") ?? "",
        "x-api-key": req.headers.get("x-api-key") ?? "",
        "anthropic-version": req.headers.get("anthropic-version") ?? "",
      },
      body: req.method === "GET" || req.method === "HEAD" ? undefined : await req.arrayBuffer(),
    });
    // Bun's fetch already decoded any compression; the stream is passed through as it arrives.
    return new Response(up.body, {
      status: up.status,
      headers: { "content-type": up.headers.get("content-type") ?? "application/json" },
    });
  },
});
console.log(`bare proxy on http://127.0.0.1:${server.port} -> ${upstream}`);
for (const s of ["SIGINT", "SIGTERM"] as const) process.on(s, () => void server.stop(true).then(() => process.exit(0)));
