/**
 * A local HTTP server that answers as a payment provider from the samples under
 * test/fixtures/payments/ (see its README for their source), and keeps every request it got,
 * so the adapters are tested over real HTTP against the provider's wire format.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";

const DIR = join(import.meta.dir, "../fixtures/payments");

/** A sample with its `{{name}}` placeholders filled (a whole-string placeholder takes the value's JSON type). */
export function sample(file: string, vars: Record<string, string | number | null>): string {
  let text = readFileSync(join(DIR, file), "utf8");
  for (const [k, v] of Object.entries(vars)) text = text.replaceAll(`"{{${k}}}"`, JSON.stringify(v));
  for (const [k, v] of Object.entries(vars)) text = text.replaceAll(`{{${k}}}`, String(v));
  return text;
}

export interface Seen {
  method: string;
  path: string;
  headers: Headers;
  body: string;
}

interface Answer {
  method: string;
  path: RegExp;
  status: number;
  body: (req: Seen) => string;
}

export class RecordedProvider {
  readonly seen: Seen[] = [];
  private answers: Answer[] = [];
  private server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    fetch: async (req) => {
      const url = new URL(req.url);
      const seen = { method: req.method, path: url.pathname, headers: req.headers, body: await req.text() };
      this.seen.push(seen);
      // The latest answer set for a route wins.
      const a = [...this.answers].reverse().find((x) => x.method === req.method && x.path.test(url.pathname));
      if (!a) return Response.json({ code: "NOT_RECORDED", message: `${req.method} ${url.pathname}` }, { status: 599 });
      return new Response(a.body(seen), { status: a.status, headers: { "content-type": "application/json" } });
    },
  });
  readonly url = `http://127.0.0.1:${this.server.port}`;

  /** Answers `method path` with a sample; `vars` may read the request (e.g. the order id it names). */
  answer(
    method: string,
    path: RegExp,
    status: number,
    file: string,
    vars: (req: Seen) => Record<string, string | number | null>,
  ) {
    this.answers.push({ method, path, status, body: (req) => sample(file, vars(req)) });
  }

  last(method: string, path: RegExp): Seen | undefined {
    return [...this.seen].reverse().find((s) => s.method === method && path.test(s.path));
  }

  count(method: string, path: RegExp): number {
    return this.seen.filter((s) => s.method === method && path.test(s.path)).length;
  }

  stop() {
    return this.server.stop(true);
  }
}
