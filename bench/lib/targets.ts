/**
 * What the benchmark calls: each target's URL for chat completions (and Anthropic Messages), and
 * the request bodies every target gets alike.
 */
import type { Target } from "./load";
import type { Peer } from "./peers";
import type { Stack } from "./stack";

export const chatTargets = (s: Stack): Target[] => [
  { name: "direct", url: `${s.simUrl}/sim/openai/v1/chat/completions` },
  { name: "proxy", url: `${s.proxyUrl}/openai/v1/chat/completions` },
  { name: "gateway", url: `${s.gatewayUrl}/v1/chat/completions` },
];

/** Anthropic's Messages API to an Anthropic-protocol upstream: the gateway relays the stream byte for byte. */
export const messagesTargets = (s: Stack): Target[] => [
  { name: "direct", url: `${s.simUrl}/sim/anthropic/v1/messages`, end: "message_stop" },
  { name: "proxy", url: `${s.proxyUrl}/anthropic/v1/messages`, end: "message_stop" },
  { name: "gateway", url: `${s.gatewayUrl}/v1/messages`, end: "message_stop" },
];

/** The chat targets with the peers: direct, proxy, essentials, portkey (when installed), gateway. */
export function withPeers(s: Stack, peers: Peer[]): Target[] {
  const [direct, proxy, gateway] = chatTargets(s);
  const peer = peers.map((p) => ({ name: p.name, url: `${p.url}/openai/v1/chat/completions`, headers: p.headers }));
  // Portkey serves OpenAI's path itself and takes the upstream from its headers.
  for (const t of peer) if (t.name === "portkey") t.url = t.url.replace("/openai/v1/", "/v1/");
  return [direct!, proxy!, ...peer, gateway!];
}

export const chatBody = (content: string, stream: boolean) =>
  JSON.stringify({
    model: "gpt-4o-mini",
    messages: [{ role: "user", content }],
    max_tokens: 64,
    ...(stream && { stream: true, stream_options: { include_usage: true } }),
  });
// The proxy and the simulator get the very body the gateway gets; the simulator ignores `stream_options` when absent.
export const NONSTREAM_BODY = chatBody("Say hello to the benchmark. [sim:latency=20]", false);
export const STREAM_BODY = chatBody("Stream a short answer to the benchmark. [sim:latency=20] [sim:chunk_ms=5]", true);
export const INSTANT_BODY = chatBody("Say hello to the benchmark.", false);
export const INSTANT_STREAM_BODY = chatBody("Stream a short answer to the benchmark.", true);
export const LONG_STREAM_BODY = chatBody("Hold this stream open. [sim:chunk_ms=500]", true);
export const MESSAGES_STREAM_BODY = JSON.stringify({
  model: "claude-haiku-4-5",
  max_tokens: 64,
  stream: true,
  messages: [{ role: "user", content: "Stream a short answer to the benchmark. [sim:latency=20] [sim:chunk_ms=5]" }],
});
