/** Deadlines, caller abort and transport failures, through the shared upstream call and the adapters. */
import { afterAll, describe, expect, test } from "bun:test";
import { UpstreamError } from "../../src/core/upstream/error";
import type { ChatRequest } from "../../src/core/model/types";
import { DeadlineError, fetchAllWithDeadlines, fetchWithDeadlines, readAllBytes } from "../../src/lib/http-deadline";
import { chatProviderFor } from "../../src/providers";
import { openAIChatProvider } from "../../src/providers/openai";
import { ctxFor, drain, fixtureBytes, fixtureServer, rawHttpServer, type Reply } from "./helpers";

let next: Reply = { kind: "hang" };
const srv = fixtureServer(() => next);
afterAll(() => srv.stop());

const req: ChatRequest = { model: "gpt-4o-mini", messages: [{ role: "user", content: "hi" }], max_tokens: 16 };

describe("fetchWithDeadlines", () => {
  test("first-byte deadline: DeadlineError and the request is aborted", async () => {
    next = { kind: "hang" };
    const t0 = Date.now();
    const err = await fetchWithDeadlines(
      srv.url,
      { method: "POST", body: "{}" },
      { firstByteTimeoutMs: 150, idleTimeoutMs: 1000 },
    ).catch((e) => e);
    expect(err).toBeInstanceOf(DeadlineError);
    expect(err.phase).toBe("first_byte");
    expect(Date.now() - t0).toBeLessThan(1500);
  });

  test("first-byte deadline also covers the first body chunk (headers sent, no body)", async () => {
    const raw = rawHttpServer({ chunks: [], then: "stall" });
    try {
      const { response, body } = await fetchWithDeadlines(
        raw.url,
        { method: "POST", body: "{}" },
        { firstByteTimeoutMs: 150, idleTimeoutMs: 5000 },
      );
      expect(response.status).toBe(200);
      const err = await readAllBytes(body).catch((e) => e);
      expect(err).toBeInstanceOf(DeadlineError);
      expect(err.phase).toBe("first_byte");
    } finally {
      raw.stop();
    }
  });

  test("idle deadline between chunks", async () => {
    next = { kind: "stall", body: "data: 1\n\n" };
    const { body } = await fetchWithDeadlines(
      srv.url,
      { method: "POST", body: "{}" },
      { firstByteTimeoutMs: 1000, idleTimeoutMs: 150 },
    );
    const err = await readAllBytes(body).catch((e) => e);
    expect(err).toBeInstanceOf(DeadlineError);
    expect(err.phase).toBe("idle");
  });

  test("slow but steady chunks within the idle deadline pass", async () => {
    next = { kind: "body", body: "x".repeat(200), chunkDelayMs: 40, chunkSize: 50 };
    const { body } = await fetchWithDeadlines(
      srv.url,
      { method: "POST", body: "{}" },
      { firstByteTimeoutMs: 1000, idleTimeoutMs: 150 },
    );
    expect((await readAllBytes(body)).length).toBe(200);
  });

  test("a consumer slower than the idle deadline is not the upstream's fault: every chunk arrives", async () => {
    next = { kind: "body", body: "x".repeat(200), chunkDelayMs: 10, chunkSize: 50 };
    const { body } = await fetchWithDeadlines(
      srv.url,
      { method: "POST", body: "{}" },
      { firstByteTimeoutMs: 1000, idleTimeoutMs: 60 },
    );
    const reader = body.getReader();
    let got = 0;
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      got += value.length;
      await Bun.sleep(200); // far past the idle deadline, between reads
    }
    expect(got).toBe(200);
  });

  test("caller abort while a read waits mid-body: the read fails with the caller's reason", async () => {
    next = { kind: "stall", body: "data: 1\n\n" };
    const caller = new AbortController();
    const { body } = await fetchWithDeadlines(
      srv.url,
      { method: "POST", body: "{}" },
      { signal: caller.signal, firstByteTimeoutMs: 1000, idleTimeoutMs: 60_000 },
    );
    const reader = body.getReader();
    expect((await reader.read()).done).toBe(false);
    const waiting = reader.read().catch((e) => e);
    const reason = new Error("client left");
    setTimeout(() => caller.abort(reason), 20);
    expect(await waiting).toBe(reason);
  });

  test("caller abort before the response: rejects with the signal's reason", async () => {
    next = { kind: "hang" };
    const ac = new AbortController();
    setTimeout(() => ac.abort(new Error("client went away")), 50);
    const err = await fetchWithDeadlines(
      srv.url,
      { method: "POST", body: "{}" },
      { signal: ac.signal, firstByteTimeoutMs: 5000, idleTimeoutMs: 5000 },
    ).catch((e) => e);
    expect(err.message).toBe("client went away");
  });

  test("already-aborted signal rejects at once", async () => {
    const err = await fetchWithDeadlines(
      srv.url,
      {},
      { signal: AbortSignal.abort(new Error("gone")), firstByteTimeoutMs: 1000, idleTimeoutMs: 1000 },
    ).catch((e) => e);
    expect(err.message).toBe("gone");
  });

  test("cancelling the body aborts the upstream request", async () => {
    next = { kind: "stall", body: "data: 1\n\n" };
    const before = srv.aborted;
    const { body } = await fetchWithDeadlines(
      srv.url,
      { method: "POST", body: "{}" },
      { firstByteTimeoutMs: 1000, idleTimeoutMs: 5000 },
    );
    const reader = body.getReader();
    await reader.read();
    await reader.cancel();
    for (let i = 0; i < 50 && srv.aborted === before; i++) await Bun.sleep(10);
    expect(srv.aborted).toBeGreaterThan(before);
  });
});

// The whole-body variant (non-streamed answers) keeps the same promises without the wrapping stream.
describe("fetchAllWithDeadlines", () => {
  const post = { method: "POST", body: "{}" };

  test("first-byte deadline: DeadlineError and the request is aborted", async () => {
    next = { kind: "hang" };
    const before = srv.aborted;
    const t0 = Date.now();
    const err = await fetchAllWithDeadlines(srv.url, post, { firstByteTimeoutMs: 150, idleTimeoutMs: 1000 }).catch(
      (e) => e,
    );
    expect(err).toBeInstanceOf(DeadlineError);
    expect(err.phase).toBe("first_byte");
    expect(Date.now() - t0).toBeLessThan(1500);
    for (let i = 0; i < 50 && srv.aborted === before; i++) await Bun.sleep(10);
    expect(srv.aborted).toBeGreaterThan(before);
  });

  /** A call to `server` fails while reading its body, on the first-byte deadline (then `server` is stopped). */
  async function failsFirstByteInBody(server: { url: string; stop(): void }, firstByteTimeoutMs: number) {
    try {
      const err = await fetchAllWithDeadlines(server.url, post, {
        firstByteTimeoutMs,
        idleTimeoutMs: 5000,
        mapBodyError: (e) => ({ body: e }),
      }).catch((e) => e);
      expect(err.body).toBeInstanceOf(DeadlineError);
      expect(err.body.phase).toBe("first_byte");
    } finally {
      server.stop();
    }
  }

  test("first-byte deadline also covers the first body chunk (headers sent, no body)", async () => {
    await failsFirstByteInBody(rawHttpServer({ chunks: [], then: "stall" }), 150);
  });

  test("idle deadline between chunks", async () => {
    next = { kind: "stall", body: "data: 1\n\n" };
    const err = await fetchAllWithDeadlines(srv.url, post, { firstByteTimeoutMs: 1000, idleTimeoutMs: 150 }).catch(
      (e) => e,
    );
    expect(err).toBeInstanceOf(DeadlineError);
    expect(err.phase).toBe("idle");
  });

  test("slow but steady chunks within the idle deadline pass, whole", async () => {
    next = { kind: "body", body: "x".repeat(200), chunkDelayMs: 40, chunkSize: 50 };
    const { response, bytes } = await fetchAllWithDeadlines(srv.url, post, {
      firstByteTimeoutMs: 1000,
      idleTimeoutMs: 150,
    });
    expect(response.status).toBe(200);
    expect(new TextDecoder().decode(bytes)).toBe("x".repeat(200));
  });

  /** An upstream that declares a 100-byte body and sends it in `pieces` pieces `gapMs` apart (fewer: then stalls). */
  function declaredBody(pieces: number, gapMs: number) {
    const listener = Bun.listen({
      hostname: "127.0.0.1",
      port: 0,
      socket: {
        data(socket) {
          socket.write("HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n");
          for (let i = 0; i < pieces; i++) setTimeout(() => socket.write("x".repeat(25)), (i + 1) * gapMs);
        },
      },
    });
    return { url: `http://127.0.0.1:${listener.port}`, stop: () => listener.stop(true) };
  }

  test("a declared body is read in one go: its gaps are not idle, it must be whole within the first-byte deadline", async () => {
    const whole = declaredBody(4, 40);
    try {
      const { bytes } = await fetchAllWithDeadlines(whole.url, post, { firstByteTimeoutMs: 2000, idleTimeoutMs: 10 });
      expect(new TextDecoder().decode(bytes)).toBe("x".repeat(100));
    } finally {
      whole.stop();
    }
    await failsFirstByteInBody(declaredBody(2, 20), 300); // half the body, then nothing
  });

  test("caller abort before the response: rejects with the signal's reason; an aborted signal at once", async () => {
    next = { kind: "hang" };
    const ac = new AbortController();
    setTimeout(() => ac.abort(new Error("client went away")), 50);
    const err = await fetchAllWithDeadlines(srv.url, post, {
      signal: ac.signal,
      firstByteTimeoutMs: 5000,
      idleTimeoutMs: 5000,
    }).catch((e) => e);
    expect(err.message).toBe("client went away");
    const gone = await fetchAllWithDeadlines(
      srv.url,
      {},
      { signal: AbortSignal.abort(new Error("gone")), firstByteTimeoutMs: 1000, idleTimeoutMs: 1000 },
    ).catch((e) => e);
    expect(gone.message).toBe("gone");
  });
});

describe("adapter transport errors", () => {
  test("first-byte timeout → UpstreamError timeout", async () => {
    next = { kind: "hang" };
    const err = await openAIChatProvider.chat(req, ctxFor(srv.url, { firstByteTimeoutMs: 100 })).catch((e) => e);
    expect(err).toBeInstanceOf(UpstreamError);
    expect(err.kind).toBe("timeout");
    expect(err.retryable).toBe(true);
  });

  test("idle timeout mid-stream → UpstreamError timeout after the partial events", async () => {
    const bytes = await fixtureBytes("openai", "chat-completion-stream-truncated.sse");
    next = { kind: "stall", body: bytes };
    const stream = await openAIChatProvider.chatStream(req, ctxFor(srv.url, { idleTimeoutMs: 150 }));
    const { events, error } = await drain(stream);
    expect(events.map((e) => (e.type === "text" ? e.text : e.type))).toEqual(["Hello", "!"]);
    expect(error).toBeInstanceOf(UpstreamError);
    expect(error.kind).toBe("timeout");
  });

  test("connection closed in the middle of the chunked body → truncated", async () => {
    const text = await Bun.file(
      new URL("../fixtures/openai/chat-completion-stream-truncated.sse", import.meta.url),
    ).text();
    const raw = rawHttpServer({ chunks: [text], then: "close" });
    try {
      const stream = await openAIChatProvider.chatStream(req, ctxFor(raw.url));
      const { events, error } = await drain(stream);
      expect(events.length).toBe(2);
      expect(error).toBeInstanceOf(UpstreamError);
      expect(error.kind).toBe("truncated");
    } finally {
      raw.stop();
    }
  });

  test("stream that ends cleanly without its terminal marker → truncated", async () => {
    next = { kind: "body", body: await fixtureBytes("openai", "chat-completion-stream-truncated.sse") };
    const stream = await openAIChatProvider.chatStream(req, ctxFor(srv.url));
    const { events, error } = await drain(stream);
    expect(events.length).toBe(2);
    expect(error.kind).toBe("truncated");
  });

  test("connection refused → transient", async () => {
    const dead = Bun.serve({ port: 0, fetch: () => new Response("") });
    const url = `http://127.0.0.1:${dead.port}`;
    dead.stop(true);
    const err = await openAIChatProvider.chat(req, ctxFor(url)).catch((e) => e);
    expect(err).toBeInstanceOf(UpstreamError);
    expect(err.kind).toBe("transient");
  });

  test("client abort mid-stream ends the iteration with the abort reason and closes the upstream", async () => {
    next = { kind: "stall", body: await fixtureBytes("openai", "chat-completion-stream-truncated.sse") };
    const before = srv.aborted;
    const ac = new AbortController();
    const stream = await openAIChatProvider.chatStream(
      req,
      ctxFor(srv.url, { signal: ac.signal, idleTimeoutMs: 5000 }),
    );
    const seen: string[] = [];
    let error: any;
    try {
      for await (const ev of stream) {
        seen.push(ev.type);
        if (seen.length === 2) setTimeout(() => ac.abort(new Error("client left")), 10);
      }
    } catch (e) {
      error = e;
    }
    expect(error?.message).toBe("client left");
    for (let i = 0; i < 50 && srv.aborted === before; i++) await Bun.sleep(10);
    expect(srv.aborted).toBeGreaterThan(before);
  });

  test("breaking out of a stream early closes the upstream", async () => {
    next = { kind: "stall", body: await fixtureBytes("openai", "chat-completion-stream-truncated.sse") };
    const before = srv.aborted;
    const stream = await openAIChatProvider.chatStream(req, ctxFor(srv.url, { idleTimeoutMs: 5000 }));
    for await (const _ of stream) break;
    for (let i = 0; i < 50 && srv.aborted === before; i++) await Bun.sleep(10);
    expect(srv.aborted).toBeGreaterThan(before);
  });
});

describe("after the terminal marker, a transport failure does not fail a complete answer", () => {
  const cases = [
    ["openai", "openai/chat-completion-stream-usage.sse"],
    ["anthropic", "anthropic/messages-stream.sse"],
    ["gemini", "gemini/stream-generate-content.sse"],
  ] as const;
  for (const [protocol, file] of cases) {
    for (const then of ["close", "stall"] as const) {
      test(`${protocol}: connection ${then === "close" ? "reset" : "left idle"} after the last event`, async () => {
        const text = await Bun.file(new URL(`../fixtures/${file}`, import.meta.url)).text();
        const raw = rawHttpServer({ chunks: [text], then });
        try {
          const stream = await chatProviderFor(protocol).chatStream(req, ctxFor(raw.url, { idleTimeoutMs: 150 }));
          const { events, error } = await drain(stream);
          expect(error).toBeUndefined();
          expect(events.slice(-2).map((e) => e.type)).toEqual(["finish", "usage"]);
        } finally {
          raw.stop();
        }
      });
    }
  }
});
