/**
 * A provider's error body never reaches a client: vendors put account,
 * organization and key details in their messages. The client gets the provider's status, a
 * reason code and our own words for it; the operator's log keeps what the provider said.
 * The simulator's `[sim:fail_message=...]` puts a marker in the vendor's error body.
 */
import { afterAll, afterEach, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { startTestGateway, type TestGateway } from "../harness";
import { setLogLevel } from "../../src/lib/log";
import { chat, chatFetch, parseSse, tenant, user } from "../support/chat";
import { NO_POLL, pollUntilFinal, submit } from "../video/helpers";

setDefaultTimeout(30_000);

const MARKER = "org-LEAKMARKER-7f3a";
const leak = (status: number) =>
  `[sim:fail=${status}][sim:fail_message=Rate limit reached in organization ${MARKER} for key sk-proj-abc]`;

let g: TestGateway;
let logged: string[] = [];
const write = process.stdout.write.bind(process.stdout);
beforeAll(async () => {
  g = await startTestGateway({ env: NO_POLL });
  // The operator's log: warn lines, captured from stdout as a log shipper would read them.
  setLogLevel("warn");
  process.stdout.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
    const text = typeof chunk === "string" ? chunk : new TextDecoder().decode(chunk);
    if (text.startsWith('{"ts"')) {
      logged.push(text);
      return true;
    }
    return (write as (...a: unknown[]) => boolean)(chunk, ...rest);
  }) as typeof process.stdout.write;
}, 60_000);
afterAll(async () => {
  process.stdout.write = write;
  setLogLevel("silent");
  await g?.stop();
});
afterEach(() => {
  logged = [];
});

/** The operator's log lines about one request. */
const logOf = (requestId: string) => logged.filter((l) => l.includes(requestId)).join("\n");

describe("chat: the client gets our words, the log gets the provider's", () => {
  for (const [model, provider] of [
    ["gpt-4o-mini", "openai"],
    ["claude-haiku-4-5", "anthropic"],
    ["gemini-2.5-flash", "google"],
  ] as const) {
    test(`${provider}: a rejection (400, 401, 404) is 502 with status, reason and a Korean sentence`, async () => {
      const { key } = await tenant(g, 50);
      for (const [status, reason] of [
        [400, "invalid_request"],
        [401, "auth"],
        [404, "not_found"],
      ] as const) {
        const r = await chat(g, key.key, { model, messages: user(`reject me ${leak(status)}`) });
        expect(r.status).toBe(502);
        expect(r.body.detail.error).toBe("upstream_request_rejected");
        expect(JSON.stringify(r.body)).not.toContain("LEAKMARKER");
        expect(JSON.stringify(r.body)).not.toContain("sk-proj");
        expect(r.body.detail.upstream).toMatchObject({ status, reason });
        expect(r.body.detail.upstream.detail).toMatch(/[가-힣]/);
        expect(logOf(r.headers.get("x-request-id")!)).toContain(MARKER);
      }
    });
  }

  test("a transient failure (every retry) and a rate limit carry no vendor text either", async () => {
    const { key } = await tenant(g, 50);
    for (const [status, code] of [
      [503, "upstream_unavailable"],
      [429, "upstream_rate_limited"],
    ] as const) {
      const r = await chat(g, key.key, { model: "gpt-4o-mini", messages: user(`busy ${leak(status)}`) });
      expect(r.body.detail.error).toBe(code);
      expect(JSON.stringify(r.body)).not.toContain("LEAKMARKER");
      expect(logOf(r.headers.get("x-request-id")!)).toContain(MARKER);
    }
  });

  test("a stream refused before its first byte is a JSON error without the vendor's body", async () => {
    const { key } = await tenant(g, 50);
    for (const model of ["gpt-4o-mini", "claude-haiku-4-5"]) {
      const res = await chatFetch(g, key.key, { model, stream: true, messages: user(`stream ${leak(400)}`) });
      expect(res.status).toBe(502);
      const text = await res.text();
      expect(text).not.toContain("LEAKMARKER");
      expect(JSON.parse(text).detail.upstream.reason).toBe("invalid_request");
    }
  });

  test("a stream that breaks off ends with our Korean words, not an internal message", async () => {
    const { key } = await tenant(g, 50);
    for (const model of ["gpt-4o-mini", "claude-haiku-4-5"]) {
      const res = await chatFetch(g, key.key, { model, stream: true, messages: user("drop me [sim:drop=2]") });
      expect(res.status).toBe(200);
      const failure = parseSse(await res.text()).find((e) => e.json?.error)!.json.error;
      expect(failure.code).toBe("upstream_error");
      expect(failure.message).toMatch(/[가-힣]/);
      expect(failure.message).not.toMatch(/upstream|socket|ECONN/i);
    }
  });

  test("Responses: the same 502, without the vendor's body", async () => {
    const { key } = await tenant(g, 50);
    const r = await g.call("POST", "/v1/responses", {
      token: key.key,
      body: { model: "gemini-2.5-flash", input: `reject ${leak(400)}` },
    });
    expect(r.status).toBe(502);
    expect(JSON.stringify(r.body)).not.toContain("LEAKMARKER");
  });

  test("the web plugin's search engine rejecting is told in our words too", async () => {
    const { key } = await tenant(g, 50);
    const prompt = `search [sim:fail@brave=400][sim:fail_message=subscription of ${MARKER}]`;
    const r = await chat(g, key.key, { model: "gpt-4o-mini", plugins: [{ id: "web" }], messages: user(prompt) });
    expect(r.status).toBe(502);
    expect(r.body.detail.error).toBe("upstream_request_rejected");
    expect(JSON.stringify(r.body)).not.toContain("LEAKMARKER");
  });
});

describe("video: submit errors and failed jobs", () => {
  test("a rejected submit is 502 without the vendor's body; the log has it", async () => {
    const { key } = await tenant(g, 10_000);
    for (const model of ["kling-v3", "seedance-2-0", "veo-3", "ltx-2-fast"]) {
      const body: Record<string, unknown> = { model, prompt: `a kite ${leak(400)}` };
      if (model.startsWith("kling")) body.duration_seconds = 5;
      if (model.startsWith("ltx")) body.resolution = "1080p";
      const r = await submit(g, key.key, body);
      expect([model, r.status]).toEqual([model, 502]);
      expect(JSON.stringify(r.body)).not.toContain("LEAKMARKER");
      expect(r.body.detail.upstream.reason).toBe("invalid_request");
    }
    // The submit has no job for the client to poll; the log names the job id and provider.
    expect(logged.filter((l) => l.includes(MARKER) && l.includes('"job_id"'))).toHaveLength(4);
  });

  test("a failed task's error is our words, not the vendor's task message", async () => {
    const { key } = await tenant(g, 10_000);
    const r = await submit(g, key.key, {
      model: "kling-v3",
      duration_seconds: 5,
      prompt: "a kite [sim:video_fail][sim:video_ms=10]",
    });
    expect(r.status).toBe(202);
    const job = await pollUntilFinal(g, key.key, r.body.job_id);
    expect(job.status).toBe("failed");
    expect(job.error.code).toBe("generation_failed");
    expect(job.error.message).not.toContain("Video generation failed");
    expect(job.error.message).toMatch(/^[^A-Za-z]*$/);
    expect(logged.join("\n")).toContain("Video generation failed");
  });
});
