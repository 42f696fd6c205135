import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { failureFor, parseDirectives, startSimulator, stripDirectives, type Simulator } from "../../src/sim/index.ts";
import {
  ANTHROPIC_AUTH,
  fixtureHttp,
  fixtureText,
  GEMINI_AUTH,
  OPENAI_AUTH,
  parseSse,
  postJson,
  readUntilBreak,
  structuralDiff,
} from "./helpers.ts";

let sim: Simulator;
beforeAll(async () => {
  sim = await startSimulator();
});
afterAll(() => sim.stop());
beforeEach(() => sim.reset());

/** One chat call per protocol, with `text` as the last user message. */
const call = {
  openai: (text: string, extra: object = {}, init: RequestInit = {}) =>
    postJson(
      `${sim.baseUrl("openai")}/v1/chat/completions`,
      { model: "m", messages: [{ role: "user", content: text }], ...extra },
      OPENAI_AUTH,
      init,
    ),
  anthropic: (text: string, extra: object = {}, init: RequestInit = {}) =>
    postJson(
      `${sim.baseUrl("anthropic")}/v1/messages`,
      { model: "c", max_tokens: 500, messages: [{ role: "user", content: text }], ...extra },
      ANTHROPIC_AUTH,
      init,
    ),
  google: (text: string, extra: object = {}, init: RequestInit = {}) => {
    const { stream, ...rest } = extra as { stream?: boolean };
    const path = stream ? "streamGenerateContent?alt=sse" : "generateContent";
    return postJson(
      `${sim.baseUrl("google")}/v1beta/models/g:${path}`,
      { contents: [{ role: "user", parts: [{ text }] }], ...rest },
      GEMINI_AUTH,
      init,
    );
  },
};
const PROTOCOLS = ["openai", "anthropic", "google"] as const;

describe("directive parser", () => {
  test("returns a generic name → value map, scoped names kept", () => {
    const d = parseDirectives(
      "hi [sim:latency=50] there [sim:hang][sim:fail@google=503x2] [sim:video_ms=100] [sim:FAIL=500]",
    );
    expect([...d]).toEqual([
      ["latency", "50"],
      ["hang", ""],
      ["fail@google", "503x2"],
      ["video_ms", "100"],
      ["fail", "500"],
    ]);
    expect(parseDirectives("no directives").size).toBe(0);
    expect(stripDirectives("a [sim:tokens=3] b")).toBe("a  b");
  });

  test("fail@provider wins for that provider only", () => {
    const d = parseDirectives("[sim:fail=500] [sim:fail@anthropic=529x1]");
    expect(failureFor(d, "anthropic")).toEqual({ status: 529, times: 1 });
    expect(failureFor(d, "openai")).toEqual({ status: 500 });
    expect(failureFor(parseDirectives("[sim:fail@google=503]"), "openai")).toBeUndefined();
  });
});

describe("[sim:tokens=N]", () => {
  test("sets the exact completion tokens for every protocol, still capped by max tokens", async () => {
    const o = await (await call.openai("x [sim:tokens=7]")).json();
    expect(o.usage.completion_tokens).toBe(7);
    expect(o.choices[0].message.content).toHaveLength(28);
    expect((await (await call.anthropic("x [sim:tokens=300]")).json()).usage.output_tokens).toBe(300);
    expect((await (await call.google("x [sim:tokens=2]")).json()).usageMetadata.candidatesTokenCount).toBe(2);

    const capped = await (await call.openai("[sim:tokens=50]", { max_tokens: 10 })).json();
    expect(capped.usage.completion_tokens).toBe(10);
    expect(capped.choices[0].finish_reason).toBe("length");
    const zero = await (await call.openai("[sim:tokens=0]", { stream: true })).text();
    expect(parseSse(zero).length).toBe(3); // role chunk, finish chunk, [DONE]
  });
});

describe("[sim:fail=STATUS]", () => {
  test("each protocol answers in its own envelope, like the recorded errors", async () => {
    const cases: [keyof typeof call, number, string, string][] = [
      ["openai", 500, "openai", "error-500.http"],
      ["openai", 503, "openai", "error-503.http"],
      ["openai", 429, "openai", "error-429-rate-limit.http"],
      ["anthropic", 529, "anthropic", "error-529.http"],
      ["anthropic", 429, "anthropic", "error-429.http"],
      ["anthropic", 500, "anthropic", "error-500.http"],
      ["google", 503, "gemini", "error-503.http"],
      ["google", 429, "gemini", "error-429.http"],
    ];
    for (const [protocol, status, vendor, file] of cases) {
      const res = await call[protocol](`boom [sim:fail=${status}]`);
      const recorded = fixtureHttp(vendor, file);
      expect(res.status).toBe(status);
      const body = await res.json();
      // The simulator always names the request id (newer Anthropic bodies do).
      expect(structuralDiff(recorded.body, body, ["request_id"])).toEqual([]);
      if (protocol === "google") expect(body.error.status).toBe(recorded.body.error.status);
      // OpenAI's 429 type names the exhausted limit: "tokens" in the recording, "requests" here.
      else if (status !== 429) expect(body.error.type).toBe(recorded.body.error.type);
      if (protocol === "openai") expect(body.error.code).toBe(recorded.body.error.code);
      if (status === 429) expect(res.headers.get("retry-after")).toBe("1");
    }
  });

  test("Gemini errors are pretty-printed with a trailing newline, as recorded", async () => {
    const res = await call.google("[sim:fail=503]");
    const recorded = fixtureText("gemini", "error-503.http");
    expect(await res.text()).toBe(recorded.slice(recorded.indexOf("\r\n\r\n") + 4));
  });

  test("the transient and rejecting statuses of the contract all work", async () => {
    for (const status of [400, 401, 403, 404, 422, 500, 502, 503, 529]) {
      for (const protocol of PROTOCOLS) {
        const res = await call[protocol](`[sim:fail=${status}]`);
        expect(res.status).toBe(status);
        const body = await res.json();
        if (protocol === "anthropic") expect(body.type).toBe("error");
        else if (protocol === "google") expect(body.error.code).toBe(status);
        else expect(body.error.message).toBeString();
      }
    }
    const overload = await (await call.anthropic("[sim:fail=529]")).json();
    expect(overload.error.type).toBe("overloaded_error");
  });

  test("a streaming request fails before any stream starts", async () => {
    const res = await call.openai("[sim:fail=502]", { stream: true });
    expect(res.status).toBe(502);
    expect(res.headers.get("content-type")).toContain("application/json");
  });
});

describe("[sim:fail=STATUSxN]", () => {
  test("only the first N calls with the same body fail", async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) statuses.push((await call.openai("retry me [sim:fail=503x2]")).status);
    expect(statuses).toEqual([503, 503, 200, 200]);
    // A different body has its own counter.
    expect((await call.openai("retry me too [sim:fail=503x2]")).status).toBe(503);
    // So does another provider serving the same directive.
    const deepseek = await postJson(
      `${sim.baseUrl("deepseek")}/v1/chat/completions`,
      { model: "m", messages: [{ role: "user", content: "retry me [sim:fail=503x2]" }] },
      OPENAI_AUTH,
    );
    expect(deepseek.status).toBe(503);
    // reset() forgets the counters.
    sim.reset();
    expect((await call.openai("retry me [sim:fail=503x2]")).status).toBe(503);
  });

  test("429xN carries Retry-After: 1", async () => {
    const first = await call.anthropic("[sim:fail=429x1]");
    expect(first.status).toBe(429);
    expect(first.headers.get("retry-after")).toBe("1");
    expect((await call.anthropic("[sim:fail=429x1]")).status).toBe(200);
  });
});

describe("[sim:fail@PROVIDER=STATUS]", () => {
  test("fails only when served as that provider", async () => {
    const text = "fallback please [sim:fail@openai=503]";
    expect((await call.openai(text)).status).toBe(503);
    expect((await call.anthropic(text)).status).toBe(200);
    expect((await call.google(text)).status).toBe(200);
    const together = await postJson(
      `${sim.baseUrl("together")}/v1/chat/completions`,
      { model: "m", messages: [{ role: "user", content: text }] },
      OPENAI_AUTH,
    );
    expect(together.status).toBe(200);
  });

  test("scoped xN and plain fail combine", async () => {
    const text = "[sim:fail@google=500x1] [sim:fail=429]";
    expect((await call.google(text)).status).toBe(500);
    expect((await call.google(text)).status).toBe(200);
    expect((await call.openai(text)).status).toBe(429);
  });
});

describe("[sim:latency=MS] and [sim:chunk_ms=MS]", () => {
  test("latency delays the first byte", async () => {
    const t0 = performance.now();
    const res = await call.openai("slow [sim:latency=150]");
    expect(res.status).toBe(200);
    expect(performance.now() - t0).toBeGreaterThanOrEqual(140);
    const t1 = performance.now();
    expect((await call.google("slow fail [sim:latency=100] [sim:fail=503]")).status).toBe(503);
    expect(performance.now() - t1).toBeGreaterThanOrEqual(90);
  });

  test("latency@provider delays that provider only and wins over a plain latency", async () => {
    const t0 = performance.now();
    expect((await call.openai("[sim:latency@google=400]")).status).toBe(200);
    expect(performance.now() - t0).toBeLessThan(300);
    const t1 = performance.now();
    expect((await call.google("[sim:latency@google=150] [sim:latency=1]")).status).toBe(200);
    expect(performance.now() - t1).toBeGreaterThanOrEqual(140);
  });

  test("a client that leaves during the latency is counted as cancelled, per provider", async () => {
    expect(sim.cancelled()).toEqual({});
    const res = call.anthropic("leaving [sim:latency=5000]", {}, { signal: AbortSignal.timeout(100) });
    await expect(res).rejects.toThrow();
    const end = performance.now() + 3000;
    while (!sim.cancelled().anthropic && performance.now() < end) await Bun.sleep(20);
    expect(sim.cancelled()).toEqual({ anthropic: 1 });
    sim.reset();
    expect(sim.cancelled()).toEqual({});
  });

  test("chunk_ms spaces the stream's frames out", async () => {
    const t0 = performance.now();
    const res = await call.anthropic("[sim:chunk_ms=15] [sim:tokens=20]", { stream: true });
    const firstByte = performance.now() - t0;
    const events = parseSse(await res.text());
    const total = performance.now() - t0;
    expect(firstByte).toBeLessThan(100);
    expect(total).toBeGreaterThanOrEqual(15 * (events.length - 1) - 5);
    expect(events.at(-1)!.event).toBe("message_stop");
  });
});

describe("[sim:drop=N]", () => {
  test("OpenAI: N content chunks, then a reset connection without finish, usage or [DONE]", async () => {
    const res = await call.openai("[sim:drop=2]", { stream: true, stream_options: { include_usage: true } });
    expect(res.status).toBe(200);
    const { text, error } = await readUntilBreak(res);
    expect(error).toBeDefined();
    const chunks = parseSse(text).map((e) => JSON.parse(e.data));
    expect(chunks).toHaveLength(3); // role chunk + 2 content chunks
    expect(chunks.every((c) => c.choices[0].finish_reason === null)).toBe(true);
    expect(text).not.toContain("[DONE]");
  });

  test("Anthropic: no message_delta / message_stop", async () => {
    const { text, error } = await readUntilBreak(await call.anthropic("[sim:drop=1]", { stream: true }));
    expect(error).toBeDefined();
    const names = parseSse(text).map((e) => e.event);
    expect(names).toEqual(["message_start", "content_block_start", "ping", "content_block_delta"]);
  });

  test("Gemini: no finishReason chunk; also with chunk_ms", async () => {
    const { text, error } = await readUntilBreak(await call.google("[sim:drop=3] [sim:chunk_ms=5]", { stream: true }));
    expect(error).toBeDefined();
    const chunks = parseSse(text, "\r\n\r\n").map((e) => JSON.parse(e.data));
    expect(chunks).toHaveLength(3);
    expect(chunks.every((c) => c.candidates[0].finishReason === undefined)).toBe(true);
  });

  test("drop=0 breaks off before any content; a JSON request ignores drop", async () => {
    const { text, error } = await readUntilBreak(await call.openai("[sim:drop=0]", { stream: true }));
    expect(error).toBeDefined();
    expect(parseSse(text)).toHaveLength(1);
    expect((await call.openai("[sim:drop=0]")).status).toBe(200);
  });
});

describe("[sim:hang]", () => {
  test("never answers; the client's abort frees the request", async () => {
    for (const protocol of PROTOCOLS) {
      const controller = new AbortController();
      const pending = call[protocol]("[sim:hang]", {}, { signal: controller.signal }).then(
        () => "answered",
        (e: Error) => e.name,
      );
      const early = await Promise.race([pending, Bun.sleep(100).then(() => "still waiting")]);
      expect(early).toBe("still waiting");
      controller.abort();
      expect(await pending).toBe("AbortError");
    }
    // The simulator still serves normally afterwards.
    expect((await call.openai("after hang")).status).toBe(200);
  });

  test("stop() does not wait for hung requests", async () => {
    const other = await startSimulator();
    const pending = postJson(
      `${other.baseUrl("openai")}/v1/chat/completions`,
      { model: "m", messages: [{ role: "user", content: "[sim:hang]" }] },
      OPENAI_AUTH,
    ).then(
      () => "answered",
      () => "failed",
    );
    await Bun.sleep(50);
    await other.stop();
    expect(["answered", "failed"]).toContain(await pending);
  });
});

describe("combined directives", () => {
  test("latency + tokens + chunk_ms on a stream", async () => {
    const t0 = performance.now();
    const res = await call.google("[sim:latency=50][sim:tokens=9][sim:chunk_ms=2]", { stream: true });
    const chunks = parseSse(await res.text(), "\r\n\r\n").map((e) => JSON.parse(e.data));
    expect(performance.now() - t0).toBeGreaterThanOrEqual(45);
    expect(chunks.at(-1).usageMetadata.candidatesTokenCount).toBe(9);
  });
});
