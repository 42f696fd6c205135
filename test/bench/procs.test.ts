/**
 * The bench's CPU readings from /proc: how a `stat` line is read (CPU ticks, a name that holds
 * spaces and parentheses) and how a process's threads are told apart, on fixed lines; then that
 * this test's own process shows the threads the bench tells apart. No CPU amount is asserted:
 * how much a thread gets depends on the machine's load.
 */
import { describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { processTree, splitThreadCpu, statCpuMs, statName, threadStats, treeCpuMs } from "../../bench/lib/procs";

/** A /proc `stat` line with `utime` and `stime` in ticks (fields 14 and 15). */
const statLine = (tid: number, name: string, utime: number, stime: number) =>
  `${tid} (${name}) S 1 ${tid} ${tid} 0 -1 4194304 120 0 0 0 ${utime} ${stime} 0 0 20 0 6 0 4521 1048576 512`;

describe("a /proc stat line", () => {
  test("its CPU is user plus system ticks, 10 ms each", () => {
    expect(statCpuMs(statLine(7, "bun", 30, 12))).toBe(420);
  });

  test("a name holding spaces and parentheses moves no field", () => {
    const line = statLine(8, "my (odd) name) x", 5, 1);
    expect(statName(line)).toBe("my (odd) name) x");
    expect(statCpuMs(line)).toBe(60);
  });
});

describe("a process's threads", () => {
  test("the main thread is the one with the process's id, the HTTP client is named, the rest are summed", () => {
    const split = splitThreadCpu(100, [
      ["100", statLine(100, "bun", 50, 10)],
      ["101", statLine(101, "JITWorker", 4, 0)],
      ["102", statLine(102, "HTTP Client", 7, 3)],
      ["103", statLine(103, "HeapHelper", 1, 1)],
    ]);
    expect(split).toEqual({ main: 600, httpClient: 100, other: 60 });
  });
});

describe.skipIf(!existsSync(`/proc/${process.pid}/task`))("this process's threads", () => {
  test("after a fetch there are a main thread and Bun's HTTP client thread", async () => {
    const server = Bun.serve({ port: 0, fetch: () => new Response("x") });
    try {
      await fetch(server.url).then((r) => r.arrayBuffer());
      const stats = threadStats(process.pid);
      expect(stats.has(String(process.pid))).toBe(true);
      expect([...stats.values()].map(statName)).toContain("HTTP Client");
      for (const line of stats.values()) expect(statCpuMs(line)).toBeGreaterThanOrEqual(0);
    } finally {
      server.stop(true);
    }
  });
});

describe.skipIf(!existsSync(`/proc/${process.pid}/stat`))("a process tree", () => {
  test("holds a child and its child (a supervisor's gateway processes), and leaves the process out once it is gone", async () => {
    // sh starts sleep as its child; the tree of this process reaches both.
    const sh = Bun.spawn(["sh", "-c", "sleep 30 & wait"], { stdout: "ignore" });
    try {
      let tree: number[] = [];
      for (let i = 0; i < 50 && tree.length < 3; i++) {
        await Bun.sleep(20);
        tree = processTree(process.pid);
      }
      expect(tree[0]).toBe(process.pid);
      expect(tree).toContain(sh.pid);
      expect(tree.length).toBeGreaterThanOrEqual(3);
      const cpu = treeCpuMs(process.pid);
      expect(cpu.total).toBeGreaterThanOrEqual(cpu.main);
    } finally {
      for (const pid of processTree(sh.pid).reverse()) process.kill(pid, "SIGKILL");
      await sh.exited;
    }
    expect(processTree(process.pid)).not.toContain(sh.pid);
  });
});
