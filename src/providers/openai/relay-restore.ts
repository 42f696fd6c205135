/**
 * A masked call's OpenAI-compatible chat stream, relayed with its values restored
 * (core/model/relay.ts, RawRestorer). Each choice's `delta.content` is one text channel and each
 * of its tool calls' `function.arguments` another, each through one PiiStreamUnmasker: a
 * placeholder split across chunks (or across network reads, which the SSE splitter has joined
 * into events) comes out whole; the tail that may still grow into one is held back until the
 * channel's next delta, and what a choice still holds when its `finish_reason` comes (or at the
 * usage chunk or `[DONE]`) goes out in one more chunk just before it, shaped like the upstream's.
 * Only chunks that change are re-encoded (`data: <json>`); every other event is its own bytes.
 */
import type { RawRestorer } from "../../core/model/relay";
import { eventJson } from "../../lib/sse-split";
import { PiiStreamUnmasker } from "../../lib/pii/unmask";
import { classifyOpenAIEvent } from "./relay";

const enc = new TextEncoder();
const encode = (data: unknown) => enc.encode(`data: ${JSON.stringify(data)}\n\n`);

type Chunk = Record<string, any> & { choices?: Record<string, any>[] };

export class OpenAIRawRestorer implements RawRestorer {
  /** Channels by choice index: `content`, and tool calls by their index. */
  private readonly choices = new Map<number, { content?: PiiStreamUnmasker; tools: Map<number, PiiStreamUnmasker> }>();
  /** The latest chunk's frame (id, object, created, model…), for the chunks the restorer adds. */
  private frame: Chunk | null = null;

  constructor(private readonly mapping: ReadonlyMap<string, string>) {}

  restore(ev: Uint8Array): Uint8Array[] {
    const kind = classifyOpenAIEvent(ev);
    if (kind === "done" || kind === "error") return [...this.flushAll(), ev];
    const chunk: Chunk | null = eventJson(ev);
    if (!chunk || !Array.isArray(chunk.choices)) return [ev];
    if (!chunk.choices.length) return [...this.flushAll(), ev]; // the usage chunk
    const { choices: _, usage: _u, ...frame } = chunk;
    this.frame = frame;
    let changed = false;
    const held: Uint8Array[] = [];
    const choices = chunk.choices.map((c) => {
      const index = typeof c.index === "number" ? c.index : 0;
      const delta = c.delta ? this.restoreDelta(index, c.delta) : c.delta;
      if (delta !== c.delta) changed = true;
      if (c.finish_reason != null) held.push(...this.flush(index));
      return delta === c.delta ? c : { ...c, delta };
    });
    return [...held, changed ? encode({ ...chunk, choices }) : ev];
  }

  private state(index: number) {
    let s = this.choices.get(index);
    if (!s) this.choices.set(index, (s = { tools: new Map() }));
    return s;
  }

  private restoreDelta(index: number, delta: Record<string, any>): Record<string, any> {
    let out = delta;
    if (typeof delta.content === "string" && delta.content) {
      const s = this.state(index);
      const content = (s.content ??= new PiiStreamUnmasker(this.mapping)).push(delta.content);
      if (content !== delta.content) out = { ...out, content };
    }
    if (Array.isArray(delta.tool_calls)) {
      let changed = false;
      const calls = delta.tool_calls.map((tc: Record<string, any>) => {
        const args = tc?.function?.arguments;
        if (typeof args !== "string" || !args) return tc;
        const tools = this.state(index).tools;
        const i = typeof tc.index === "number" ? tc.index : 0;
        let ch = tools.get(i);
        if (!ch) tools.set(i, (ch = new PiiStreamUnmasker(this.mapping)));
        const restored = ch.push(args);
        if (restored === args) return tc;
        changed = true;
        return { ...tc, function: { ...tc.function, arguments: restored } };
      });
      if (changed) out = { ...out, tool_calls: calls };
    }
    return out;
  }

  /** What choice `index` still holds, as one more chunk; none when it holds nothing. */
  private flush(index: number): Uint8Array[] {
    const s = this.choices.get(index);
    if (!s) return [];
    this.choices.delete(index);
    const delta: Record<string, unknown> = {};
    const content = s.content?.flush();
    if (content) delta.content = content;
    const calls = [...s.tools]
      .map(([i, ch]) => ({ index: i, function: { arguments: ch.flush() } }))
      .filter((c) => c.function.arguments);
    if (calls.length) delta.tool_calls = calls;
    if (!content && !calls.length) return [];
    return [encode({ ...this.frame, choices: [{ index, delta, finish_reason: null }] })];
  }

  private flushAll(): Uint8Array[] {
    return [...this.choices.keys()].flatMap((i) => this.flush(i));
  }
}
