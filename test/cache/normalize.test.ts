import { describe, expect, test } from "bun:test";
import { canonicalJson, cosine, isCacheable, paramHash, requestHash, singleTurn } from "../../src/core/cache/normalize";
import type { CacheableRequest } from "../../src/core/cache/types";

const base = (over: Partial<CacheableRequest> = {}): CacheableRequest => ({
  model: "openai/gpt-4o-mini",
  messages: [
    { role: "system", content: "Be brief." },
    { role: "user", content: "Hello there" },
  ],
  max_tokens: 256,
  temperature: 0.2,
  ...over,
});

describe("canonicalJson", () => {
  test("sorts keys at every depth and drops undefined", () => {
    expect(canonicalJson({ b: 1, a: { d: [1, { z: 1, y: 2 }], c: undefined } })).toBe(
      '{"a":{"d":[1,{"y":2,"z":1}]},"b":1}',
    );
  });
});

describe("requestHash", () => {
  test("key order and ignored fields do not matter", () => {
    const a = base();
    const b: CacheableRequest = {
      temperature: 0.2,
      max_tokens: 256,
      messages: a.messages,
      model: a.model,
      stream: true,
      trace_id: "t-1",
      stream_options: { include_usage: true },
      user: "u",
      metadata: { x: 1 },
    };
    expect(requestHash(b)).toBe(requestHash(a));
  });

  test("every answer-changing parameter matters", () => {
    const h = requestHash(base());
    for (const over of [
      { temperature: 0.3 },
      { top_p: 0.9 },
      { max_tokens: 257 },
      { stop: ["\n"] },
      { seed: 7 },
      { frequency_penalty: 0.1 },
      { presence_penalty: 0.1 },
      { reasoning_effort: "high" },
      { response_format: { type: "json_object" } },
      { tools: [{ type: "function", function: { name: "f" } }] },
      { tool_choice: "required" },
      { passthrough: { logprobs: true } },
      { model: "openai/gpt-4o" },
    ] as Partial<CacheableRequest>[]) {
      expect(requestHash(base(over))).not.toBe(h);
    }
  });

  test("messages: roles, contents and order matter; cache_control and single-part arrays do not", () => {
    const h = requestHash(base());
    expect(
      requestHash(
        base({
          messages: [
            { role: "system", content: "Be brief." },
            { role: "user", content: "Hello there!" },
          ],
        }),
      ),
    ).not.toBe(h);
    expect(
      requestHash(
        base({
          messages: [
            { role: "user", content: "Be brief." },
            { role: "user", content: "Hello there" },
          ],
        }),
      ),
    ).not.toBe(h);
    expect(
      requestHash(
        base({
          messages: [
            { role: "user", content: "Hello there" },
            { role: "system", content: "Be brief." },
          ],
        }),
      ),
    ).not.toBe(h);
    expect(
      requestHash(
        base({
          messages: [
            { role: "system", content: [{ type: "text", text: "Be brief.", cache_control: { type: "ephemeral" } }] },
            { role: "user", content: [{ type: "text", text: "Hello there" }] },
          ],
        }),
      ),
    ).toBe(h);
    const twoParts = base({
      messages: [
        {
          role: "user",
          content: [
            { type: "text", text: "a" },
            { type: "text", text: "b" },
          ],
        },
      ],
    });
    const swapped = base({
      messages: [
        {
          role: "user",
          content: [
            { type: "text", text: "b" },
            { type: "text", text: "a" },
          ],
        },
      ],
    });
    expect(requestHash(twoParts)).not.toBe(requestHash(swapped));
  });

  test("null, empty-list and absent parameters are the same", () => {
    expect(requestHash(base({ seed: null as never }))).toBe(requestHash(base()));
    expect(requestHash(base({ tools: [], stop: [] }))).toBe(requestHash(base()));
  });
});

describe("singleTurn and paramHash", () => {
  test("user only, or one system then one user, text only, no tools", () => {
    expect(singleTurn(base())?.text).toBe("Hello there");
    expect(singleTurn(base({ messages: [{ role: "user", content: [{ type: "text", text: "hi" }] }] }))?.text).toBe(
      "hi",
    );
    expect(
      singleTurn(
        base({
          messages: [
            { role: "user", content: "a" },
            { role: "assistant", content: "b" },
            { role: "user", content: "c" },
          ],
        }),
      ),
    ).toBeNull();
    expect(
      singleTurn(
        base({
          messages: [
            { role: "system", content: "a" },
            { role: "system", content: "b" },
            { role: "user", content: "c" },
          ],
        }),
      ),
    ).toBeNull();
    expect(singleTurn(base({ messages: [{ role: "assistant", content: "a" }] }))).toBeNull();
    expect(singleTurn(base({ tools: [{ type: "function", function: { name: "f" } }] }))).toBeNull();
    expect(singleTurn(base({ tools: [] }))).not.toBeNull();
    expect(
      singleTurn(
        base({
          messages: [
            {
              role: "user",
              content: [
                { type: "text", text: "what is this" },
                { type: "image_url", image_url: { url: "https://x/y.png" } },
              ],
            },
          ],
        }),
      ),
    ).toBeNull();
  });

  test("paramHash ignores the user text but not the system prompt or parameters", () => {
    const h = paramHash(base());
    expect(
      paramHash(
        base({
          messages: [
            { role: "system", content: "Be brief." },
            { role: "user", content: "Something else" },
          ],
        }),
      ),
    ).toBe(h);
    expect(paramHash(base({ stream: true }))).toBe(h);
    expect(
      paramHash(
        base({
          messages: [
            { role: "system", content: "Be verbose." },
            { role: "user", content: "Hello there" },
          ],
        }),
      ),
    ).not.toBe(h);
    expect(paramHash(base({ temperature: 1 }))).not.toBe(h);
  });
});

describe("isCacheable and cosine", () => {
  test("n > 1 is not cacheable", () => {
    expect(isCacheable(base())).toBe(true);
    expect(isCacheable(base({ n: 1 }))).toBe(true);
    expect(isCacheable(base({ n: 2 }))).toBe(false);
    expect(isCacheable(base({ passthrough: { n: 3 } }))).toBe(false);
  });

  test("cosine", () => {
    expect(cosine([1, 0], [1, 0])).toBeCloseTo(1);
    expect(cosine([1, 0], [0, 1])).toBeCloseTo(0);
    expect(cosine([1, 1], [2, 2])).toBeCloseTo(1);
    expect(cosine([1, 0], [1, 0, 0])).toBe(0);
    expect(cosine([0, 0], [1, 0])).toBe(0);
  });
});
