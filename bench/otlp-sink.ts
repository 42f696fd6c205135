/**
 * An OTLP/HTTP trace receiver for `npm run bench -- --otel`: answers every export with an
 * empty success and counts spans' bytes, so the gateway's tracing cost is measured with a
 * receiver that costs nothing itself. `GET /stats` says how many exports and bytes arrived.
 */
const port = Number(process.env.SINK_PORT ?? 4318);
let received = 0;
let bytes = 0;
Bun.serve({
  port,
  hostname: "127.0.0.1",
  async fetch(req) {
    if (req.method === "GET") return Response.json({ exports: received, bytes });
    bytes += (await req.arrayBuffer()).byteLength;
    received++;
    return new Response("{}", { headers: { "content-type": "application/json" } });
  },
});
