/** The bench's CPU readings from /proc: per process and per thread, on this test's own process. */
import { describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { cpuMs, threadCpuMs } from "../../bench/lib/procs";

const total = (t: ReturnType<typeof threadCpuMs>) => t.main + t.httpClient + t.other;

describe.skipIf(!existsSync(`/proc/${process.pid}/task`))("CPU per thread", () => {
  test("work on the JavaScript thread is counted as the main thread's, and the threads add up to the process", () => {
    const before = { threads: threadCpuMs(process.pid), process: cpuMs(process.pid)! };
    // Spin until the process has used 300 ms of CPU, however busy the machine is.
    const start = process.cpuUsage();
    for (;;) {
      const used = process.cpuUsage(start);
      if (used.user + used.system >= 300_000) break;
    }
    const after = { threads: threadCpuMs(process.pid), process: cpuMs(process.pid)! };
    // One tick is 10 ms; the spin is the JavaScript thread's alone.
    const main = after.threads.main - before.threads.main;
    expect(main).toBeGreaterThanOrEqual(250);
    expect(main).toBeLessThanOrEqual(400);
    // Compared as growth: a thread that exited earlier counts in the process's figure alone.
    const threads = total(after.threads) - total(before.threads);
    expect(Math.abs(after.process - before.process - threads)).toBeLessThanOrEqual(50);
  });

  test("fetch's socket work is on Bun's HTTP client thread", async () => {
    const server = Bun.serve({ port: 0, fetch: () => new Response("x".repeat(64 * 1024)) });
    try {
      const before = threadCpuMs(process.pid);
      const until = Date.now() + 30_000;
      let after = before;
      // Enough calls that the client thread's I/O adds up to whole 10 ms ticks.
      while (after.httpClient - before.httpClient < 20 && Date.now() < until) {
        await Promise.all(Array.from({ length: 50 }, () => fetch(server.url).then((r) => r.arrayBuffer())));
        after = threadCpuMs(process.pid);
      }
      expect(after.httpClient - before.httpClient).toBeGreaterThanOrEqual(20);
    } finally {
      server.stop(true);
    }
  }, 35_000);
});
