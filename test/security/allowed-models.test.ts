/**
 * `allowed_models` means one thing on every route that names a model (docs/decisions.md #52):
 * a key limited to one model is refused any other the same way (400, code `model_not_allowed`,
 * the same message naming the id as sent) on chat, Responses, Messages and its count_tokens,
 * embeddings and video jobs, before any upstream call or hold; the listed model passes on each.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { startTestGateway, type TestGateway, type TestUser } from "../harness";
import { NO_POLL } from "../video/helpers";

setDefaultTimeout(30_000);

let g: TestGateway;
let owner: TestUser;
beforeAll(async () => {
  g = await startTestGateway({ db: "pglite", env: NO_POLL });
  owner = await g.newUser({ creditKrw: 100_000 });
}, 60_000);
afterAll(() => g?.stop());

const say = [{ role: "user", content: "hello" }];
/** Each route's smallest call naming `model`, and the status of its answer. */
const ROUTES = {
  chat: { path: "/v1/chat/completions", body: (model: string) => ({ model, messages: say, max_tokens: 16 }), ok: 200 },
  responses: {
    path: "/v1/responses",
    body: (model: string) => ({ model, input: "hello", max_output_tokens: 16 }),
    ok: 200,
  },
  messages: { path: "/v1/messages", body: (model: string) => ({ model, messages: say, max_tokens: 16 }), ok: 200 },
  count_tokens: { path: "/v1/messages/count_tokens", body: (model: string) => ({ model, messages: say }), ok: 200 },
  embeddings: { path: "/v1/embeddings", body: (model: string) => ({ model, input: "hello" }), ok: 200 },
  video: {
    path: "/v1/video/generations",
    body: (model: string) => ({ model, prompt: "a red kite", duration_seconds: 5 }),
    ok: 202,
  },
} as const;
type Route = keyof typeof ROUTES;

function call(route: Route, key: string, model: string) {
  const r = ROUTES[route];
  return g.call("POST", r.path, { token: key, body: r.body(model), headers: { "accept-language": "en" } });
}

async function keyFor(allowed: string[]): Promise<string> {
  return (await g.newKey(owner, { allowed_models: allowed })).key;
}

/** The refusal as a client reads it: every dialect carries `error.code` and `error.message`. */
async function expectRefused(route: Route, key: string, model: string) {
  const before = g.gw.sim!.stats().total;
  const r = await call(route, key, model);
  expect([route, model, r.status, r.body.error?.code, r.body.error?.message]).toEqual([
    route,
    model,
    400,
    "model_not_allowed",
    `This key cannot call the model '${model}'.`,
  ]);
  expect(g.gw.sim!.stats().total).toBe(before); // refused before any upstream call
  return r.body;
}

async function expectPasses(route: Route, key: string, model: string) {
  const r = await call(route, key, model);
  expect([route, model, r.status]).toEqual([route, model, ROUTES[route].ok]);
}

describe("a key limited to one model, on every route", () => {
  const cases: { routes: Route[]; allowed: string; other: string }[] = [
    { routes: ["chat", "responses", "messages", "count_tokens"], allowed: "gpt-4o-mini", other: "gpt-4.1-mini" },
    { routes: ["embeddings"], allowed: "text-embedding-3-small", other: "gemini-embedding-001" },
    { routes: ["video"], allowed: "kling-v3", other: "veo-3" },
  ];
  for (const { routes, allowed, other } of cases)
    test(`limited to ${allowed}: ${routes.join(", ")} refuse ${other} alike and answer ${allowed}`, async () => {
      const key = await keyFor([allowed]);
      for (const route of routes) await expectRefused(route, key, other);
      for (const route of routes) await expectPasses(route, key, allowed);
    });

  test("the body is the dialect's own, the code and message the same", async () => {
    const key = await keyFor(["gpt-4o-mini"]);
    const refused: [Route, string][] = [
      ["chat", "gpt-4.1-mini"],
      ["responses", "gpt-4.1-mini"],
      ["embeddings", "text-embedding-3-small"],
      ["video", "kling-v3"],
    ];
    // The OpenAI-shaped routes add the detail body of the specification.
    for (const [route, model] of refused)
      expect([route, (await expectRefused(route, key, model)).detail.error]).toEqual([route, "model_not_allowed"]);
    // Messages answers in Anthropic's envelope, so the Anthropic SDK raises its own 400 class.
    for (const route of ["messages", "count_tokens"] as const) {
      const anthropic = await expectRefused(route, key, "gpt-4.1-mini");
      expect([anthropic.type, anthropic.error.type]).toEqual(["error", "invalid_request_error"]);
    }
  });
});

describe("what the list means for video (decisions #52)", () => {
  test("a list of chat models refuses every video model, the default one included", async () => {
    const key = await keyFor(["gpt-4o-mini"]);
    await expectRefused("video", key, "kling-v3");
    const before = g.gw.sim!.stats().total;
    const bare = await g.call("POST", "/v1/video/generations", {
      token: key,
      body: { prompt: "a red kite" },
      headers: { "accept-language": "en" },
    });
    expect([bare.status, bare.body.error?.code, bare.body.error?.message]).toEqual([
      400,
      "model_not_allowed",
      "This key cannot call the model 'veo-3'.",
    ]);
    expect(g.gw.sim!.stats().total).toBe(before);
  });

  test("a video model is listed by itself: neither its family nor a sibling of it allows it", async () => {
    await expectRefused("video", await keyFor(["K-v3"]), "kling-v3");
    await expectRefused("video", await keyFor(["kling-v3"]), "kling-v3-turbo");
  });

  test("any spelling of the listed model matches: vendor prefix, case, a provider pin", async () => {
    for (const entry of ["kling/kling-v3", "KLING-V3", "kling-v3@kling"])
      await expectPasses("video", await keyFor([entry]), "kling-v3");
  });

  test("a video model listed beside chat models allows both, and nothing else", async () => {
    const key = await keyFor(["gpt-4o-mini", "kling-v3"]);
    await expectPasses("chat", key, "gpt-4o-mini");
    await expectPasses("video", key, "kling-v3");
    await expectRefused("embeddings", key, "text-embedding-3-small");
    await expectRefused("video", key, "seedance-2-0");
  });
});
