/**
 * POST /v1/video/generations and GET /v1/jobs/{id}: the general ranges (422 with loc), the
 * key rules (401, BYOK 400, charge_amount_krw 403/delegated), model errors, credit errors,
 * upstream submit failures (no retry, no money), and who may read a job.
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from "bun:test";
import { startTestGateway, type TestGateway, type TestUser } from "../harness";
import { money, NO_POLL, pollUntilFinal, simCalls, submit } from "./helpers";

// A loaded machine (several suites at once) makes sign-ups and lifecycles slow.
setDefaultTimeout(30_000);

let g: TestGateway;
let user: TestUser;
let key: string;

beforeAll(async () => {
  g = await startTestGateway({ db: "pglite", env: NO_POLL });
  user = await g.newUser({ creditKrw: 100_000 });
  key = (await g.newKey(user)).key;
}, 60_000);
afterAll(() => g.stop());

describe("general ranges: 422 with loc, before any hold", () => {
  const cases: [string, Record<string, unknown>, (string | number)[]][] = [
    ["duration below 2", { duration_seconds: 1 }, ["body", "duration_seconds"]],
    ["duration above 20", { duration_seconds: 21 }, ["body", "duration_seconds"]],
    ["duration not an integer", { duration_seconds: 5.5 }, ["body", "duration_seconds"]],
    ["duration as a string", { duration_seconds: "8" }, ["body", "duration_seconds"]],
    ["unknown resolution", { resolution: "8k" }, ["body", "resolution"]],
    ["prompt over 4,000 characters", { prompt: "x".repeat(4001) }, ["body", "prompt"]],
    ["empty prompt", { prompt: "" }, ["body", "prompt"]],
    ["non-HTTP image URL", { images: ["ftp://example.com/a.png"] }, ["body", "images", 0]],
    ["data: URL as image", { image: "data:image/png;base64,AAAA" }, ["body", "image"]],
    ["relative video URL", { videos: ["/clip.mp4"] }, ["body", "videos", 0]],
    [
      "four videos",
      { videos: ["https://a.example/1", "https://a.example/2", "https://a.example/3", "https://a.example/4"] },
      ["body", "videos"],
    ],
    [
      "four audios",
      { audios: ["https://a.example/1", "https://a.example/2", "https://a.example/3", "https://a.example/4"] },
      ["body", "audios"],
    ],
    ["ten images", { images: Array.from({ length: 10 }, (_, i) => `https://a.example/${i}.png`) }, ["body", "images"]],
    [
      "ten images after merging image",
      { image: "https://a.example/0.png", images: Array.from({ length: 9 }, (_, i) => `https://a.example/${i}.png`) },
      ["body", "images"],
    ],
    ["negative charge_amount_krw", { charge_amount_krw: -1 }, ["body", "charge_amount_krw"]],
    ["generate_audio not a boolean", { generate_audio: "yes" }, ["body", "generate_audio"]],
  ];
  for (const [name, body, loc] of cases) {
    test(name, async () => {
      const before = await money(g, user);
      const r = await submit(g, key, { prompt: "a red kite", ...body });
      expect(r.status).toBe(422);
      expect(r.body.detail.map((d: any) => JSON.stringify(d.loc))).toContain(JSON.stringify(loc));
      expect(await money(g, user)).toEqual(before);
    });
  }

  test("a missing prompt is reported as missing", async () => {
    const r = await submit(g, key, { model: "veo-3" });
    expect(r.status).toBe(422);
    expect(r.body.detail[0]).toMatchObject({ loc: ["body", "prompt"], type: "missing" });
  });

  test("the prompt limit counts characters, not UTF-16 units", async () => {
    const r = await submit(g, key, { prompt: "🎬".repeat(4000) });
    expect(r.status).toBe(202);
    const over = await submit(g, key, { prompt: "🎬".repeat(4001) });
    expect(over.status).toBe(422);
  });

  test("Idempotency-Key over 128 characters is 422 and creates nothing", async () => {
    const before = await money(g, user);
    const r = await submit(g, key, { prompt: "a red kite" }, { "idempotency-key": "k".repeat(129) });
    expect(r.status).toBe(422);
    expect(r.body.detail[0].loc).toEqual(["header", "idempotency-key"]);
    expect(await money(g, user)).toEqual(before);
  });
});

describe("keys", () => {
  test("no key or a bad key is 401", async () => {
    expect((await submit(g, "", { prompt: "x" })).status).toBe(401);
    expect((await submit(g, "sk-gw-nope", { prompt: "x" })).status).toBe(401);
  });

  test("a BYOK key is 400 byok_not_supported and holds nothing", async () => {
    const byok = await g.admin("POST", `/v1/admin/users/${user.id}/byok-keys`, {
      provider: "openai",
      provider_api_key: "sk-user-own",
    });
    expect(byok.status).toBe(201);
    const before = await money(g, user);
    const r = await submit(g, byok.body.key, { prompt: "a red kite" });
    expect(r.status).toBe(400);
    expect(r.body.detail.error).toBe("byok_not_supported");
    expect(await money(g, user)).toEqual(before);
  });

  test("charge_amount_krw from an ordinary key is 403 charge_amount_not_allowed; null is as if not sent", async () => {
    const before = await money(g, user);
    const r = await submit(g, key, { prompt: "a red kite", charge_amount_krw: 500 });
    expect(r.status).toBe(403);
    expect(r.body.detail.error).toBe("charge_amount_not_allowed");
    expect(await money(g, user)).toEqual(before);
    expect((await submit(g, key, { prompt: "a red kite", charge_amount_krw: null })).status).toBe(202);
  });

  test("a delegated key's charge_amount_krw is held and settled exactly", async () => {
    const u = await g.newUser({ creditKrw: 10_000 });
    const delegated = await g.admin("POST", `/v1/admin/users/${u.id}/delegated-keys`, {});
    expect(delegated.status).toBe(201);
    const r = await submit(g, delegated.body.key, {
      model: "kling-v3",
      duration_seconds: 10,
      prompt: "fixed price [sim:video_ms=10]",
      charge_amount_krw: 1234,
    });
    expect(r.status).toBe(202);
    expect(await money(g, u)).toEqual({ balance: 10_000, held: 1234 });
    const job = await pollUntilFinal(g, delegated.body.key, r.body.job_id);
    expect(job.status).toBe("succeeded");
    expect(job.cost).toEqual({ krw: 1234 });
    expect(await money(g, u)).toEqual({ balance: 10_000 - 1234, held: 0 });
  });

  test("a delegated key's charge_amount_krw of 0, below 0 or fractional is 422 before any hold or job", async () => {
    const u = await g.newUser({ creditKrw: 10_000 });
    const delegated = await g.admin("POST", `/v1/admin/users/${u.id}/delegated-keys`, {});
    g.gw.sim!.reset();
    for (const charge of [0, -1, 0.5, 12.5, "1000"]) {
      const r = await submit(g, delegated.body.key, {
        model: "kling-v3",
        duration_seconds: 10,
        prompt: "free video?",
        charge_amount_krw: charge,
      });
      expect([charge, r.status]).toEqual([charge, 422]);
      expect(r.body.detail.map((d: any) => JSON.stringify(d.loc))).toContain(
        JSON.stringify(["body", "charge_amount_krw"]),
      );
    }
    expect(await money(g, u)).toEqual({ balance: 10_000, held: 0 });
    expect(
      Number(
        (
          await g.gw.deps.db.query<{ n: string }>("select count(*)::text as n from video_jobs where user_id = $1", [
            u.id,
          ])
        )[0]!.n,
      ),
    ).toBe(0);
    expect(g.gw.sim!.stats().total).toBe(0);
    // The smallest charge, 1 KRW, is accepted and held.
    const one = await submit(g, delegated.body.key, {
      model: "kling-v3",
      duration_seconds: 10,
      prompt: "one won",
      charge_amount_krw: 1,
    });
    expect(one.status).toBe(202);
    expect(await money(g, u)).toEqual({ balance: 10_000, held: 1 });
  });

  test("allowed_models limits video models too", async () => {
    const limited = await g.newKey(user, { allowed_models: ["kling/kling-v3"] });
    const r = await submit(g, limited.key, { model: "veo-3", prompt: "x" });
    expect(r.status).toBe(400);
    expect(r.body.detail.error).toBe("model_not_allowed");
    expect((await submit(g, limited.key, { model: "kling-v3", duration_seconds: 5, prompt: "x" })).status).toBe(202);
  });
});

describe("models and credits", () => {
  test("an unknown model is 400 with suggestions; a chat model is not a video model", async () => {
    const r = await submit(g, key, { model: "veo-33", prompt: "x" });
    expect(r.status).toBe(400);
    expect(r.body.detail.error).toBe("model_not_found");
    expect(r.body.detail.suggestions).toContain("veo-3");
    const chat = await submit(g, key, { model: "gpt-4o-mini", prompt: "x" });
    expect(chat.status).toBe(400);
    expect(chat.body.detail.error).toBe("model_not_found");
  });

  test("not enough credits is 402 with no job and no hold", async () => {
    const poor = await g.newUser({ creditKrw: 100 });
    const k = await g.newKey(poor);
    const r = await submit(g, k.key, { prompt: "expensive" });
    expect(r.status).toBe(402);
    expect(r.body.detail.error).toBe("insufficient_credits");
    expect(await money(g, poor)).toEqual({ balance: 100, held: 0 });
    const rows = await g.gw.deps.db.query<{ n: number }>(
      "select count(*)::int as n from video_jobs where key_id = $1",
      [k.id],
    );
    expect(Number(rows[0]!.n)).toBe(0);
  });

  test("a key's monthly budget applies to the hold", async () => {
    const k = await g.newKey(user, { monthly_budget_krw: 1000 });
    const r = await submit(g, k.key, { prompt: "over budget" });
    expect(r.status).toBe(402);
    expect(r.body.detail.error).toBe("monthly_budget_exceeded");
  });

  test("the default model is veo-3 at 8 s 720p, and the 202 is the job object", async () => {
    const before = await money(g, user);
    const r = await submit(g, key, { prompt: "defaults" });
    expect(r.status).toBe(202);
    expect(r.headers.get("location")).toBe(`/v1/jobs/${r.body.job_id}`);
    expect(r.body).toMatchObject({
      status: "processing",
      model: "veo-3",
      result_url: null,
      cost: null,
      error: null,
      assets: [],
    });
    expect(r.body.job_id).toMatch(/^[0-9a-f-]{36}$/);
    const after = await money(g, user);
    expect(after.held - before.held).toBe(560 * 8);
  });
});

describe("upstream submit failures: no retry, no money, no job to poll", () => {
  const cases: [string, number, string][] = [
    ["503 is 502 upstream_unavailable", 503, "upstream_unavailable"],
    ["400 is 502 upstream_request_rejected", 400, "upstream_request_rejected"],
    ["429 is 429 upstream_rate_limited", 429, "upstream_rate_limited"],
  ];
  for (const [name, status, code] of cases) {
    test(name, async () => {
      const stats0 = g.gw.sim!.stats();
      const before = await money(g, user);
      const r = await submit(g, key, { model: "seedance-2-0", prompt: `fails [sim:fail=${status}]` });
      expect(r.status).toBe(status === 429 ? 429 : 502);
      expect(r.body.detail.error).toBe(code);
      if (status === 429) expect(r.headers.get("retry-after")).toBe("1");
      if (status === 400) expect(r.body.detail.retryable).toBe(false);
      expect(await money(g, user)).toEqual(before);
      // Exactly one create call: media generation is never retried.
      const creates = simCalls(g.gw.sim!.stats(), "seedance", "POST") - simCalls(stats0, "seedance", "POST");
      expect(creates).toBe(1);
    });
  }
});

describe("reading a job", () => {
  test("non-UUID is 400 invalid_request; unknown is 404; another key (even the same user's) is 404", async () => {
    const r = await submit(g, key, { prompt: "mine" });
    expect(r.status).toBe(202);
    const id = r.body.job_id;

    const bad = await g.call("GET", "/v1/jobs/not-a-uuid", { token: key });
    expect(bad.status).toBe(400);
    expect(bad.body.error.type).toBe("invalid_request");
    expect((await g.call("GET", `/v1/jobs/${crypto.randomUUID()}`, { token: key })).status).toBe(404);

    const sibling = await g.newKey(user);
    expect((await g.call("GET", `/v1/jobs/${id}`, { token: sibling.key })).status).toBe(404);
    const stranger = await g.newUser();
    const strangerKey = await g.newKey(stranger);
    expect((await g.call("GET", `/v1/jobs/${id}`, { token: strangerKey.key })).status).toBe(404);
    expect((await g.call("POST", `/v1/jobs/${id}/cancel`, { token: sibling.key })).status).toBe(404);

    const own = await g.call("GET", `/v1/jobs/${id.toUpperCase()}`, { token: key });
    expect(own.status).toBe(200);
    expect(Object.keys(own.body)).toEqual(
      expect.arrayContaining(["job_id", "status", "model", "result_url", "cost", "error", "assets"]),
    );
    expect(own.body.job_id).toBe(id);
  });
});
