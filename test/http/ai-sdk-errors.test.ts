/**
 * The Vercel AI SDK (`ai` + `@ai-sdk/openai`) over real HTTP: its APICallError carries our
 * message (it reads OpenAI's top-level `error.message`), a mid-stream failure reaches
 * `fullStream` as an error part with our message and code.
 */
import { describe, expect, test, setDefaultTimeout } from "bun:test";
import { createOpenAI } from "@ai-sdk/openai";
import { APICallError, generateText, streamText } from "ai";
import { ERROR_CODES } from "../../src/core/errors";
import { ERROR_MESSAGES_EN } from "../../src/core/error-messages-en";
import { suiteGateway } from "../harness";
import { tenant } from "../support/chat";

setDefaultTimeout(30_000);

describe("the Vercel AI SDK shows our errors", () => {
  const gw = suiteGateway();
  const provider = (apiKey: string, headers: Record<string, string> = {}) =>
    createOpenAI({ apiKey, baseURL: gw().url + "/v1", headers });

  test("402: the APICallError's message is ours, in Korean or in English", async () => {
    const { key } = await tenant(gw(), 0);
    const e: any = await generateText({
      model: provider(key.key).chat("gpt-4o-mini"),
      prompt: "hi",
      maxRetries: 0,
    }).catch((x) => x);
    expect(APICallError.isInstance(e)).toBe(true);
    expect(e.statusCode).toBe(402);
    expect(e.message).toBe(ERROR_CODES.insufficient_credits.message);
    expect(e.data.error).toMatchObject({ code: "insufficient_credits", type: "insufficient_quota" });
    expect(JSON.parse(e.responseBody).detail.error).toBe("insufficient_credits");
    const en: any = await generateText({
      model: provider(key.key, { "accept-language": "en" }).chat("gpt-4o-mini"),
      prompt: "hi",
      maxRetries: 0,
    }).catch((x) => x);
    expect(en.message).toBe(ERROR_MESSAGES_EN.insufficient_credits!);
  });

  test("422: the message names the field", async () => {
    const { key } = await tenant(gw(), 100);
    const e: any = await generateText({
      model: provider(key.key).chat("gpt-4o-mini"),
      prompt: "hi",
      temperature: 5,
      maxRetries: 0,
    }).catch((x) => x);
    expect(e.statusCode).toBe(422);
    expect(e.message).toContain("body.temperature: 2 이하여야 합니다.");
    expect(e.data.error).toMatchObject({ code: "validation_error", param: "temperature" });
  });

  test("a mid-stream failure is an error part with our message and code", async () => {
    const { key } = await tenant(gw(), 100);
    const r = streamText({
      model: provider(key.key, { "accept-language": "en" }).chat("gpt-4o-mini"),
      prompt: "ai sdk drop [sim:tokens=200] [sim:drop=2]",
      maxRetries: 0,
      onError: () => {},
    });
    let text = "";
    let error: any = null;
    for await (const part of r.fullStream) {
      if (part.type === "text-delta") text += part.text;
      if (part.type === "error") error = part.error;
    }
    expect(text.length).toBeGreaterThan(0);
    expect(error).toMatchObject({
      code: "upstream_error",
      message: "The provider's response stream broke off.",
      type: "server_error",
    });
  });
});
