/**
 * The declared schemas against the gateway's real answers over HTTP: recorded vendor answers
 * (test/fixtures: OpenAI's chat completion and Responses object, Anthropic's messages) served
 * over a socket as the OpenAI and Anthropic upstreams, called through every dialect. Each dialect is seen both relayed (the vendor's own body: Messages on an Anthropic
 * model, Responses on an OpenAI one) and translated by our encoders (the other vendor's answer),
 * plus embeddings and a video job (the simulator's), the model list, the key-management answers
 * and the errors each dialect renders.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { TSchema } from "@sinclair/typebox";
import { startTestGateway, type TestGateway } from "../harness";
import { tenant } from "../support/chat";
import { AnthropicError, AnthropicMessage, AnthropicTokenCount } from "../../src/surfaces/anthropic/schemas";
import { ChatCompletion, EmbeddingList } from "../../src/surfaces/openai/schemas";
import { Model, ModelList } from "../../src/surfaces/openai/model-schemas";
import { CompatibleError, StructuredError, ValidationErrorBody } from "../../src/surfaces/openai/error-schemas";
import { ResponseObject } from "../../src/surfaces/responses/schemas";
import { VideoJob } from "../../src/surfaces/video/schemas";
import { KeyList, KeyRecord, KeyUsage, MgmtKeyList, MgmtKeyRecord } from "../../src/surfaces/gateway/key-answers";
import { departures } from "./helpers";

setDefaultTimeout(30_000);

const fixture = (path: string) => readFileSync(join(import.meta.dir, "../fixtures", path), "utf8");
/** What the fake Anthropic upstream answers next. */
let anthropicServing = "anthropic/messages.json";
/** The recorded answer for each upstream path. */
const upstream = Bun.serve({
  port: 0,
  hostname: "127.0.0.1",
  fetch(req) {
    const path = new URL(req.url).pathname;
    const name = path.endsWith("/messages")
      ? anthropicServing
      : path.endsWith("/chat/completions")
        ? "openai/chat-completion.json"
        : path.endsWith("/responses")
          ? "responses/responses.json"
          : null;
    if (!name) return new Response("not found", { status: 404 });
    return new Response(fixture(name), { headers: { "content-type": "application/json" } });
  },
});

let g: TestGateway;
beforeAll(async () => {
  const base = `http://127.0.0.1:${upstream.port}`;
  g = await startTestGateway({
    env: {
      ANTHROPIC_BASE_URL: base,
      ANTHROPIC_API_KEY: "test-key",
      OPENAI_BASE_URL: `${base}/v1`,
      OPENAI_API_KEY: "test-key",
      VIDEO_POLL_WORKERS: "0",
    },
  });
}, 60_000);
afterAll(async () => {
  await g?.stop();
  upstream.stop(true);
});

/** A POST's answer, its JSON parsed. */
const answer = (key: string, path: string, body: unknown) => g.call("POST", path, { token: key, body });

function matches(schema: TSchema, r: { status: number; body: unknown }, status = 200) {
  expect(r.status).toBe(status);
  expect(departures(schema, r.body)).toEqual([]);
}

describe("the gateway's answers over HTTP match their declared schemas", () => {
  test("chat completion, translated from OpenAI's and Anthropic's recorded answers", async () => {
    const { key } = await tenant(g);
    for (const model of ["gpt-4o-mini", "claude-haiku-4-5"]) {
      const r = await answer(key.key, "/v1/chat/completions", {
        model,
        messages: [{ role: "user", content: "hi" }],
        max_tokens: 100,
      });
      matches(ChatCompletion, r);
    }
  });

  test("Messages: Anthropic's recorded answers relayed (text, a tool call), OpenAI's translated", async () => {
    const { key } = await tenant(g);
    const ask = (model: string) => ({ model, max_tokens: 100, messages: [{ role: "user", content: "hi" }] });
    for (const served of ["anthropic/messages.json", "anthropic/messages-json-tool.json"]) {
      anthropicServing = served;
      const r = await answer(key.key, "/v1/messages", ask("claude-haiku-4-5"));
      matches(AnthropicMessage, r);
      // Relayed as it came: the vendor's own id.
      expect(r.body.id).toBe(JSON.parse(fixture(served)).id);
    }
    anthropicServing = "anthropic/messages.json";
    const translated = await answer(key.key, "/v1/messages", ask("gpt-4o-mini"));
    matches(AnthropicMessage, translated);
    expect(translated.body.id).toMatch(/^msg_[0-9a-f]{32}$/);
    const count = await answer(key.key, "/v1/messages/count_tokens", {
      model: "gpt-4o-mini",
      messages: [{ role: "user", content: "hi" }],
    });
    matches(AnthropicTokenCount, count);
  });

  test("Responses: OpenAI's recorded answer relayed (a reasoning item), Anthropic's translated", async () => {
    const { key } = await tenant(g);
    const relayed = await answer(key.key, "/v1/responses", { model: "gpt-5-mini", input: "hi" });
    matches(ResponseObject, relayed);
    expect(relayed.body.output.map((i: any) => i.type)).toEqual(["reasoning", "message"]);
    const translated = await answer(key.key, "/v1/responses", { model: "claude-haiku-4-5", input: "hi" });
    matches(ResponseObject, translated);
    expect(translated.body.output.map((i: any) => i.type)).toEqual(["message"]);
  });

  test("embeddings (the simulator's), floats and base64; the model list; a video job", async () => {
    const { key } = await tenant(g, 100_000);
    for (const encoding_format of ["float", "base64"]) {
      const r = await answer(key.key, "/v1/embeddings", {
        model: "gemini-embedding-001",
        input: ["hi", "there"],
        encoding_format,
      });
      matches(EmbeddingList, r);
      expect(r.body.data).toHaveLength(2);
    }
    matches(ModelList, await g.call("GET", "/v1/models", { token: key.key }));
    matches(Model, await g.call("GET", "/v1/models/gpt-4o-mini", { token: key.key }));
    const job = await answer(key.key, "/v1/video/generations", { prompt: "a cat on a skateboard" });
    matches(VideoJob, job, 202);
    matches(VideoJob, await g.call("GET", `/v1/jobs/${job.body.job_id}`, { token: key.key }));
  });

  test("the key-management answers: keys, their usage, management keys, a child key", async () => {
    const { user } = await tenant(g);
    const jwt = { token: user.jwt };
    const body = { name: "k", allowed_models: ["gpt-4o-mini"], monthly_budget_krw: 1000, ip_allowlist: ["10.0.0.0/8"] };
    matches(KeyRecord, await g.call("POST", "/v1/keys", { ...jwt, body }), 201);
    matches(KeyList, await g.call("GET", "/v1/keys", jwt));
    matches(KeyUsage, await g.call("GET", "/v1/keys/usage", jwt));
    const mgmt = await g.call("POST", "/v1/management-keys", { ...jwt, body: { name: "m" } });
    matches(MgmtKeyRecord, mgmt, 201);
    matches(MgmtKeyList, await g.call("GET", "/v1/management-keys", jwt));
    const child = { token: mgmt.body.key, body: { name: "c", monthly_budget_krw: 10 } };
    matches(KeyRecord, await g.call("POST", "/v1/provisioning/keys", child), 201);
    matches(KeyList, await g.call("GET", "/v1/provisioning/keys", { token: mgmt.body.key }));
  });

  test("errors: each dialect's bodies (auth, validation, not found, payment)", async () => {
    const { key } = await tenant(g);
    const broke = await tenant(g, 0);
    const chat = { model: "gpt-4o-mini", messages: [{ role: "user", content: "hi" }] };
    matches(StructuredError, await answer("sk-gw-nope", "/v1/chat/completions", chat), 401);
    matches(ValidationErrorBody, await answer(key.key, "/v1/chat/completions", { model: "gpt-4o-mini" }), 422);
    matches(StructuredError, await answer(broke.key.key, "/v1/chat/completions", chat), 402);
    matches(CompatibleError, await g.call("GET", "/v1/no-such-route", { token: key.key }), 404);
    const ask = { model: "claude-haiku-4-5", max_tokens: 10, messages: [{ role: "user", content: "hi" }] };
    matches(AnthropicError, await answer("sk-gw-nope", "/v1/messages", ask), 401);
    matches(AnthropicError, await answer(key.key, "/v1/messages", { model: "claude-haiku-4-5" }), 422);
    matches(AnthropicError, await answer(broke.key.key, "/v1/messages", ask), 402);
  });
});
