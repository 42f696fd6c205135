import { describe, expect, test } from "bun:test";
import { Glob } from "bun";
import { chatProviderFor, embeddingProviderFor } from "../../src/providers";

describe("provider registry", () => {
  test("one chat adapter per protocol", () => {
    expect(chatProviderFor("openai").protocol).toBe("openai");
    expect(chatProviderFor("anthropic").protocol).toBe("anthropic");
    expect(chatProviderFor("gemini").protocol).toBe("gemini");
    expect(typeof chatProviderFor("openai").openRawStream).toBe("function");
    // Raw streams are relayed to a client of the same dialect (chat ← OpenAI, Messages ← Anthropic).
    expect(typeof chatProviderFor("anthropic").openRawStream).toBe("function");
    expect(chatProviderFor("gemini").openRawStream).toBeUndefined();
  });

  test("embeddings for openai-compatible and gemini, none for anthropic", () => {
    expect(embeddingProviderFor("openai")!.protocol).toBe("openai");
    expect(embeddingProviderFor("anthropic")).toBeUndefined();
    expect(embeddingProviderFor("gemini")!.protocol).toBe("gemini");
  });

  // TypeBox describes the vendor answers the adapters check (providers/common/wire-check.ts);
  // the Stripe adapter verifies webhook signatures with Stripe's own SDK (docs/payments.md).
  test("adapters import only core/, lib/, other provider files, TypeBox and Stripe's SDK", async () => {
    const root = new URL("../../src/providers/", import.meta.url).pathname;
    const bad: string[] = [];
    for await (const file of new Glob("**/*.ts").scan(root)) {
      const text = await Bun.file(root + file).text();
      for (const m of text.matchAll(/from\s+"([^"]+)"/g)) {
        const spec = m[1]!;
        if (!spec.startsWith(".")) {
          if (!/^(@sinclair\/typebox(\/.*)?|stripe)$/.test(spec)) bad.push(`${file}: ${spec}`);
          continue;
        }
        const resolved = new URL(spec, `file://${root}${file}`).pathname;
        const src = new URL("../../src/", import.meta.url).pathname;
        const rel = resolved.slice(src.length);
        if (!/^(core|lib|providers)\//.test(rel)) bad.push(`${file}: ${spec}`);
      }
    }
    expect(bad).toEqual([]);
  });
});
