/**
 * A client that sends a request body the way an attacker would, over a plain TCP socket:
 * chunked or with a declared (possibly lying) Content-Length, in bursts, slowly, and stopping
 * as soon as the server answers. `fetch` cannot do this: it sends the whole body first and
 * hides what the server did with the connection.
 */
import { connect, type Socket } from "node:net";

export interface UploadPlan {
  path: string;
  headers?: Record<string, string>;
  /** `chunked`, or the Content-Length to declare (any number: it may lie). */
  framing: "chunked" | { contentLength: number };
  /** What the body is made of: its first bytes, then filler up to `total`. */
  prefix?: string;
  total: number;
  /** Bytes per write and the pause after each write. */
  burst: number;
  pauseMs?: number;
  /** Sent first, then the client waits this long for an answer before sending the rest. */
  probe?: { bytes: number; waitMs: number };
  /** Give up after this long in all. */
  timeoutMs?: number;
}

export interface UploadResult {
  status: number | null;
  body: any;
  headers: Record<string, string>;
  /** Body bytes written before the answer's status line arrived. */
  sentBeforeAnswer: number;
  /** Milliseconds from the first byte written to the status line. */
  answeredAfterMs: number | null;
  /** The server closed the connection (within a second after its answer). */
  closedByServer: boolean;
  /** Milliseconds from the first byte written to the server's hang-up (null: it did not). */
  closedAfterMs: number | null;
}

const filler = Buffer.alloc(1 << 20, 0x61); // 'a': inside a JSON string it keeps the text valid so far

export async function upload(baseUrl: string, plan: UploadPlan): Promise<UploadResult> {
  const { hostname, port } = new URL(baseUrl);
  const sock: Socket = connect(Number(port), hostname);
  await new Promise<void>((resolve, reject) => {
    sock.once("connect", resolve);
    sock.once("error", reject);
  });
  let raw = "";
  let answeredAt: number | null = null;
  let sentBeforeAnswer = 0;
  let sent = 0;
  let closed = false;
  let closedAt: number | null = null;
  const started = performance.now();
  const answered = new Promise<void>((resolve) => {
    sock.on("data", (d) => {
      raw += d.toString("latin1");
      if (answeredAt === null && raw.includes("\r\n")) {
        answeredAt = performance.now();
        sentBeforeAnswer = sent;
      }
      if (complete(raw)) resolve();
    });
    sock.on("close", () => {
      closed = true;
      closedAt = performance.now();
      resolve();
    });
  });
  sock.on("error", () => {});

  const head = [`POST ${plan.path} HTTP/1.1`, `host: ${hostname}:${port}`, "content-type: application/json"];
  for (const [k, v] of Object.entries(plan.headers ?? {})) head.push(`${k}: ${v}`);
  head.push(
    plan.framing === "chunked" ? "transfer-encoding: chunked" : `content-length: ${plan.framing.contentLength}`,
  );
  sock.write(head.join("\r\n") + "\r\n\r\n");

  const prefix = Buffer.from(plan.prefix ?? "");
  const write = async (n: number): Promise<void> => {
    // The prefix first (possibly over several writes), then filler.
    let data: Buffer = prefix.subarray(Math.min(sent, prefix.length), Math.min(sent + n, prefix.length));
    if (data.length < n) data = Buffer.concat([data, filler.subarray(0, n - data.length)]);
    const frame =
      plan.framing === "chunked" ? [Buffer.from(`${data.length.toString(16)}\r\n`), data, Buffer.from("\r\n")] : [data];
    for (const f of frame)
      if (!sock.write(f)) await Promise.race([new Promise((r) => sock.once("drain", r)), answered]);
    sent += data.length;
  };
  const deadline = started + (plan.timeoutMs ?? 15_000);
  const stop = () => answeredAt !== null || closed || performance.now() > deadline;
  if (plan.probe) {
    await write(Math.min(plan.probe.bytes, plan.total));
    await Promise.race([answered, Bun.sleep(plan.probe.waitMs)]);
  }
  while (sent < plan.total && !stop()) {
    await write(Math.min(plan.burst, plan.total - sent));
    if (plan.pauseMs) await Promise.race([answered, Bun.sleep(plan.pauseMs)]);
  }
  if (answeredAt === null && !closed && sent >= plan.total && plan.framing === "chunked") sock.write("0\r\n\r\n");
  await Promise.race([answered, Bun.sleep(Math.max(0, deadline - performance.now()))]);
  // Did the server hang up after answering? Give it a moment.
  if (!closed) await Promise.race([new Promise((r) => sock.once("close", r)), Bun.sleep(1000)]);
  sock.destroy();

  const parsed = parse(raw);
  return {
    ...parsed,
    sentBeforeAnswer: answeredAt === null ? sent : sentBeforeAnswer,
    answeredAfterMs: answeredAt === null ? null : answeredAt - started,
    closedByServer: closed,
    closedAfterMs: closedAt === null ? null : closedAt - started,
  };
}

/** True once the first response's head and its Content-Length of body are in. */
function complete(raw: string): boolean {
  const end = raw.indexOf("\r\n\r\n");
  if (end < 0) return false;
  const len = /\r\ncontent-length:\s*(\d+)/i.exec(raw.slice(0, end));
  return len !== null && raw.length - end - 4 >= Number(len[1]);
}

function parse(raw: string): { status: number | null; body: any; headers: Record<string, string> } {
  const end = raw.indexOf("\r\n\r\n");
  if (end < 0) return { status: null, body: null, headers: {} };
  const [line, ...lines] = raw.slice(0, end).split("\r\n");
  const headers = Object.fromEntries(
    lines.map((l) => [l.slice(0, l.indexOf(":")).toLowerCase(), l.slice(l.indexOf(":") + 1).trim()]),
  );
  const len = Number(headers["content-length"] ?? 0);
  const text = Buffer.from(raw.slice(end + 4, end + 4 + len), "latin1").toString("utf8");
  let body: any = text;
  try {
    body = JSON.parse(text);
  } catch {}
  return { status: Number(line!.split(" ")[1]), body, headers };
}
