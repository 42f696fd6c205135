/**
 * Errors as SDK users see them: the official `openai` SDK over real HTTP shows our message,
 * code and type (its error reads OpenAI's top-level `error` object), while the raw body keeps
 * the specification's shape. Accept-Language en gives English messages, Korean stays the
 * default. Every error code has an English message.
 */
import { describe, expect, test, setDefaultTimeout } from "bun:test";
import OpenAI from "openai";
import { ERROR_CODES, type ErrorCode } from "../../src/core/errors";
import { ERROR_MESSAGES_EN } from "../../src/core/error-messages-en";
import { preferredLang } from "../../src/http/lang";
import { suiteGateway } from "../harness";
import { chat, chatFetch, parseSse, sdk, tenant, user } from "../support/chat";

setDefaultTimeout(30_000);

const HANGUL = /[\uac00-\ud7a3]/;

/** Runs `f`, returning what it threw. */
async function thrown(f: () => Promise<unknown>): Promise<any> {
  try {
    await f();
  } catch (e) {
    return e;
  }
  throw new Error("expected an error");
}

function english(c: OpenAI): OpenAI {
  return c.withOptions({ defaultHeaders: { "accept-language": "en-US,en;q=0.9,ko;q=0.5" } });
}

describe("every error code has an English message", () => {
  test("the English table covers the code table, in English", () => {
    const missing = (Object.keys(ERROR_CODES) as ErrorCode[]).filter((c) => !ERROR_MESSAGES_EN[c]?.trim());
    expect(missing).toEqual([]);
    for (const [code, en] of Object.entries(ERROR_MESSAGES_EN)) {
      expect([code, HANGUL.test(en!)]).toEqual([code, false]);
      expect([code, HANGUL.test(ERROR_CODES[code as ErrorCode].message)]).toEqual([code, true]);
    }
    expect(Object.keys(ERROR_MESSAGES_EN).filter((c) => !(c in ERROR_CODES))).toEqual([]);
  });
});

describe("Accept-Language", () => {
  test("English only when English is preferred over Korean", () => {
    const cases: [string | null, "ko" | "en"][] = [
      [null, "ko"],
      ["", "ko"],
      ["en", "en"],
      ["en-US", "en"],
      ["EN-gb", "en"],
      ["ko", "ko"],
      ["ko-KR,ko;q=0.9,en-US;q=0.8,en;q=0.7", "ko"],
      ["en-US,en;q=0.9,ko;q=0.8", "en"],
      ["ko;q=0.5, en;q=0.8", "en"],
      ["en;q=0.5, ko;q=0.8", "ko"],
      ["fr-FR, en;q=0.5", "en"],
      ["fr-FR, de", "ko"],
      ["*", "ko"],
      ["en;q=0.3, *;q=0.9", "ko"],
      ["en;q=0", "ko"],
      ["en, ko", "en"],
      ["ko, en", "ko"],
      ["en;q=0.8, ko;q=0.8", "en"],
      ["garbage;;;q=x,,", "ko"],
    ];
    for (const [h, want] of cases) expect([h, preferredLang(h)]).toEqual([h, want]);
  });
});

describe("the openai SDK shows our errors", () => {
  const gw = suiteGateway({ env: { MAX_BODY_BYTES: "4096" } });

  test("402 insufficient credits", async () => {
    const { sdk: c, key } = await tenant(gw(), 0);
    const e = await thrown(() => c.chat.completions.create({ model: "gpt-4o-mini", messages: user("hi") }));
    expect(e).toBeInstanceOf(OpenAI.APIError);
    expect(e.status).toBe(402);
    expect(e.code).toBe("insufficient_credits");
    expect(e.type).toBe("insufficient_quota");
    expect(e.message).toBe(`402 ${ERROR_CODES.insufficient_credits.message}`);
    // The raw body keeps the specification's structured shape beside OpenAI's object.
    const raw = await chat(gw(), key.key, { model: "gpt-4o-mini", messages: user("hi") });
    expect(raw.body).toEqual({
      detail: {
        error: "insufficient_credits",
        message: ERROR_CODES.insufficient_credits.message,
        action: { type: "topup", path: "/billing" },
      },
      error: {
        message: ERROR_CODES.insufficient_credits.message,
        type: "insufficient_quota",
        code: "insufficient_credits",
        param: null,
      },
    });
  });

  test("402 in English with Accept-Language en", async () => {
    const { sdk: c, key } = await tenant(gw(), 0);
    const e = await thrown(() => english(c).chat.completions.create({ model: "gpt-4o-mini", messages: user("hi") }));
    expect(e.status).toBe(402);
    expect(e.message).toBe(`402 ${ERROR_MESSAGES_EN.insufficient_credits}`);
    expect(e.code).toBe("insufficient_credits");
    const raw = await chat(gw(), key.key, { model: "gpt-4o-mini", messages: user("hi") }, { "accept-language": "en" });
    expect(raw.body.detail.message).toBe(ERROR_MESSAGES_EN.insufficient_credits!);
    expect(raw.body.detail.error).toBe("insufficient_credits");
  });

  test("401 bad key", async () => {
    const c = sdk(gw(), "sk-not-a-real-key");
    const call = (client: OpenAI) => client.chat.completions.create({ model: "gpt-4o-mini", messages: user("hi") });
    const e = await thrown(() => call(c));
    expect(e).toBeInstanceOf(OpenAI.AuthenticationError);
    expect(e.status).toBe(401);
    expect(e.code).toBe("unauthorized");
    expect(e.type).toBe("authentication_error");
    expect(e.message).toMatch(/^401 .*API 키/);
    expect(HANGUL.test(e.message)).toBe(true);
    const en = await thrown(() => call(english(c)));
    expect(en.message).toBe("401 A valid API key is required.");
    const raw = await chat(gw(), "sk-not-a-real-key", { model: "gpt-4o-mini", messages: user("hi") });
    expect(raw.body.detail.error).toBe("unauthorized");
    expect(raw.body.error.code).toBe("unauthorized");
  });

  test("429 all upstreams rate-limited", async () => {
    const { sdk: c } = await tenant(gw(), 100);
    const e = await thrown(() =>
      c.chat.completions.create({ model: "gpt-4o-mini", messages: user("busy [sim:fail=429]") }),
    );
    expect(e).toBeInstanceOf(OpenAI.RateLimitError);
    expect(e.code).toBe("upstream_rate_limited");
    expect(e.type).toBe("rate_limit_error");
    expect(e.message).toBe(`429 ${ERROR_CODES.upstream_rate_limited.message}`);
  });

  test("422 validation: Korean by default, English with Accept-Language en", async () => {
    const { sdk: c, key } = await tenant(gw(), 100);
    const e = await thrown(() =>
      c.chat.completions.create({ model: "gpt-4o-mini", messages: user("hi"), temperature: 5 }),
    );
    expect(e).toBeInstanceOf(OpenAI.UnprocessableEntityError);
    expect(e.status).toBe(422);
    expect(e.code).toBe("validation_error");
    expect(e.type).toBe("invalid_request_error");
    expect(e.param).toBe("temperature");
    expect(e.message).toContain("body.temperature: 2 이하여야 합니다.");
    const en = await thrown(() =>
      english(c).chat.completions.create({ model: "gpt-4o-mini", messages: user("hi"), temperature: 5 }),
    );
    expect(en.message).toContain("body.temperature: Expected number to be less or equal to 2");
    expect(HANGUL.test(en.message)).toBe(false);
    // The raw body keeps the specification's validation list.
    const raw = await chat(gw(), key.key, { model: "gpt-4o-mini", messages: user("hi"), temperature: 5 });
    expect(raw.status).toBe(422);
    expect(raw.body.detail).toEqual([
      { loc: ["body", "temperature"], msg: "2 이하여야 합니다.", type: "NumberMaximum" },
    ]);
    const rawEn = await chat(
      gw(),
      key.key,
      { model: "gpt-4o-mini", messages: user("hi"), temperature: 5 },
      { "accept-language": "en" },
    );
    expect(rawEn.body.detail).toEqual([
      { loc: ["body", "temperature"], msg: "Expected number to be less or equal to 2", type: "NumberMaximum" },
    ]);
  });

  test("422 with a nested field names it as OpenAI's param path; its msg is Korean too", async () => {
    const { key } = await tenant(gw(), 100);
    const r = await chat(gw(), key.key, {
      model: "gpt-4o-mini",
      messages: [
        { role: "user", content: "hi" },
        { role: "user", content: 5 },
      ],
    });
    expect(r.status).toBe(422);
    const first = r.body.detail[0];
    expect(HANGUL.test(first.msg)).toBe(true);
    expect(r.body.error.param).toBe(
      first.loc
        .slice(1)
        .reduce((s: string, p: string | number) => (typeof p === "number" ? `${s}[${p}]` : s ? `${s}.${p}` : p), ""),
    );
    expect(r.body.error.param).toMatch(/^messages\[1\]/);
  });

  test("422 msgs are Korean for the usual schema failures, TypeBox's English with en", async () => {
    const { key } = await tenant(gw(), 100);
    const body = {
      model: "gpt-4o-mini",
      messages: [{ role: "robot", content: "x" }],
      max_tokens: "many",
      trace_id: "t".repeat(200),
      top_p: -1,
      stream: "yes",
    };
    const ko = await chat(gw(), key.key, body);
    expect(ko.status).toBe(422);
    expect(ko.body.detail.length).toBeGreaterThanOrEqual(4);
    for (const d of ko.body.detail) {
      expect([d.loc, HANGUL.test(d.msg)]).toEqual([d.loc, true]);
      // Not the generic fallback around TypeBox's English.
      expect([d.loc, d.msg.includes("(Expected")]).toEqual([d.loc, false]);
    }
    const en = await chat(gw(), key.key, body, { "accept-language": "en" });
    expect(en.body.detail.map((d: any) => d.loc)).toEqual(ko.body.detail.map((d: any) => d.loc));
    for (const d of en.body.detail) expect([d.loc, HANGUL.test(d.msg)]).toEqual([d.loc, false]);
    expect(HANGUL.test(en.body.error.message)).toBe(false);
  });

  test("413 payload too large: the compatible envelope gains code and param", async () => {
    const { sdk: c } = await tenant(gw(), 100);
    const e = await thrown(() => c.chat.completions.create({ model: "gpt-4o-mini", messages: user("x".repeat(8000)) }));
    expect(e.status).toBe(413);
    expect(e.code).toBe("payload_too_large");
    expect(e.type).toBe("payload_too_large");
    expect(e.message).toBe("413 요청 본문이 허용된 크기를 초과했습니다.");
    const en = await thrown(() =>
      english(c).chat.completions.create({ model: "gpt-4o-mini", messages: user("x".repeat(8000)) }),
    );
    expect(en.message).toBe("413 The request body exceeds the allowed size.");
    expect(en.param).toBeNull();
  });

  test("400 unknown model and 404 unknown model id", async () => {
    const { sdk: c } = await tenant(gw(), 100);
    const e = await thrown(() => c.chat.completions.create({ model: "no-such-model-xyz", messages: user("hi") }));
    expect(e).toBeInstanceOf(OpenAI.BadRequestError);
    expect(e.code).toBe("model_not_found");
    expect(e.type).toBe("invalid_request_error");
    expect(e.message).toContain("'no-such-model-xyz'");
    expect(HANGUL.test(e.message)).toBe(true);
    const en = await thrown(() =>
      english(c).chat.completions.create({ model: "no-such-model-xyz", messages: user("hi") }),
    );
    expect(en.message).toContain("The model is not supported: 'no-such-model-xyz'.");
    const nf = await thrown(() => c.models.retrieve("no-such-model-xyz"));
    expect(nf).toBeInstanceOf(OpenAI.NotFoundError);
    expect(nf.status).toBe(404);
    expect(nf.code).toBe("not_found");
    expect(nf.message).toBe("404 모델을 찾을 수 없습니다: 'no-such-model-xyz'.");
    const nfEn = await thrown(() => english(c).models.retrieve("no-such-model-xyz"));
    expect(nfEn.message).toBe("404 Model not found: 'no-such-model-xyz'.");
  });

  test("502 upstream failure, with the upstream summary in the request's language", async () => {
    const { sdk: c, key } = await tenant(gw(), 100);
    const e = await thrown(() =>
      c.chat.completions.create({ model: "gpt-4o-mini", messages: user("reject me [sim:fail=400]") }),
    );
    expect(e).toBeInstanceOf(OpenAI.InternalServerError);
    expect(e.status).toBe(502);
    expect(e.code).toBe("upstream_request_rejected");
    expect(e.type).toBe("server_error");
    expect(e.message).toBe(`502 ${ERROR_CODES.upstream_request_rejected.message}`);
    const raw = await chat(gw(), key.key, { model: "gpt-4o-mini", messages: user("reject me [sim:fail=400]") });
    expect(raw.body.detail).toMatchObject({
      error: "upstream_request_rejected",
      retryable: false,
      upstream: { status: 400, reason: "invalid_request" },
    });
    expect(HANGUL.test(raw.body.detail.upstream.detail)).toBe(true);
    const rawEn = await chat(
      gw(),
      key.key,
      { model: "gpt-4o-mini", messages: user("reject me [sim:fail=400]") },
      { "accept-language": "en" },
    );
    expect(rawEn.body.detail.message).toBe(ERROR_MESSAGES_EN.upstream_request_rejected!);
    expect(rawEn.body.detail.upstream.detail).toBe("The provider did not accept the request's format or parameters.");
  });

  test("502 upstream unavailable after retries", async () => {
    const { sdk: c } = await tenant(gw(), 100);
    const e = await thrown(() =>
      english(c).chat.completions.create({ model: "gpt-4o-mini", messages: user("down [sim:fail=503]") }),
    );
    expect(e.status).toBe(502);
    expect(e.code).toBe("upstream_unavailable");
    expect(e.message).toBe(`502 ${ERROR_MESSAGES_EN.upstream_unavailable}`);
  });

  test("a mid-stream failure surfaces through the SDK's stream iterator with our message and code", async () => {
    const { sdk: c, key } = await tenant(gw(), 100);
    const read = async (client: OpenAI) => {
      const s = await client.chat.completions.create({
        model: "gpt-4o-mini",
        stream: true,
        messages: user("sdk drop [sim:tokens=200] [sim:drop=2]"),
      });
      let text = "";
      const err = await (async () => {
        for await (const ch of s) text += ch.choices[0]?.delta?.content ?? "";
      })().catch((e) => e);
      return { err, text };
    };
    const ko = await read(c);
    expect(ko.text.length).toBeGreaterThan(0);
    expect(ko.err).toBeInstanceOf(OpenAI.APIError);
    expect(ko.err.code).toBe("upstream_error");
    expect(ko.err.type).toBe("server_error");
    expect(ko.err.message).toBe("제공자의 응답 스트림이 중간에 끊겼습니다.");
    expect(ko.err.error.partial).toBe(ko.text);
    const en = await read(english(c));
    expect(en.err.code).toBe("upstream_error");
    expect(en.err.message).toBe("The provider's response stream broke off.");
    // The raw event keeps the specification's {code, message, partial}.
    const res = await chatFetch(gw(), key.key, {
      model: "gpt-4o-mini",
      stream: true,
      messages: user("raw drop [sim:tokens=200] [sim:drop=2]"),
    });
    const events = parseSse(await res.text()).filter((e) => e.data !== null);
    expect(events.at(-2)!.json.error).toMatchObject({
      code: "upstream_error",
      message: "제공자의 응답 스트림이 중간에 끊겼습니다.",
      partial: expect.any(String),
    });
  });

  test("a mid-stream failure of a Responses stream surfaces through the SDK too", async () => {
    const { sdk: c } = await tenant(gw(), 100);
    const s = await english(c).responses.create({
      model: "gpt-4o-mini",
      stream: true,
      input: "responses drop [sim:tokens=200] [sim:drop=2]",
    });
    const err: any = await (async () => {
      for await (const _ of s) void _;
    })().catch((e) => e);
    expect(err).toBeInstanceOf(OpenAI.APIError);
    expect(err.code).toBe("upstream_error");
    expect(err.message).toBe("The provider's response stream broke off.");
  });
});

describe("the openai SDK shows our rate limit", () => {
  const gw = suiteGateway({ env: { RATE_LIMIT_RPM: "2" } });

  test("429 rate limit", async () => {
    const { sdk: c, key } = await tenant(gw(), 100);
    const call = () => c.chat.completions.create({ model: "gpt-4o-mini", messages: user("rate me") });
    await call();
    await call();
    const e = await thrown(call);
    expect(e).toBeInstanceOf(OpenAI.RateLimitError);
    expect(e.status).toBe(429);
    expect(e.code).toBe("rate_limited");
    expect(e.type).toBe("rate_limit_error");
    expect(e.message).toBe(`429 ${ERROR_CODES.rate_limited.message}`);
    expect(Number(e.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    const raw = await chat(gw(), key.key, { model: "gpt-4o-mini", messages: user("rate me") });
    expect(raw.body.detail).toEqual({
      error: "rate_limited",
      message: ERROR_CODES.rate_limited.message,
      retryable: true,
    });
  });
});
