/**
 * The bench's heap probe (bench/lib/heap-probe.ts): a Bun process run with the collector off
 * reports its heap's capacity on demand, and that capacity grows by what the process allocates
 * and stays put while it allocates nothing.
 */
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { collectorOff, heapCapacity } from "../../bench/lib/heap-probe";

const dir = mkdtempSync(join(tmpdir(), "heap-probe-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// Allocates N small objects each time a line arrives on stdin, then says "done"; the objects are
// dropped at once, as a call's are: with the collector on their space would be reused.
const SCRIPT = `
const N = Number(process.env.N);
process.stdout.write("ready\\n");
let sink = null;
for await (const _ of console) {
  for (let i = 0; i < N; i++) sink = { a: i, b: i + 1, c: i + 2, d: i + 3, next: sink && i % 64 ? sink : null };
  process.stdout.write("done\\n");
}
`;

test("with the collector off, capacity grows by what was allocated and not otherwise", async () => {
  const script = join(dir, "alloc.ts");
  writeFileSync(script, SCRIPT);
  const out = join(dir, "heap.txt");
  const off = collectorOff(out);
  const N = 200_000;
  const child = Bun.spawn([process.execPath, ...off.flags, script], {
    env: { ...process.env, ...off.env, N: String(N) },
    stdin: "pipe",
    stdout: "pipe",
  });
  try {
    const reader = (child.stdout as ReadableStream<Uint8Array>).getReader();
    const next = async () => new TextDecoder().decode((await reader.read()).value);
    expect(await next()).toContain("ready");
    await Bun.sleep(200);

    const idle0 = await heapCapacity(child.pid, out);
    await Bun.sleep(300);
    const idle1 = await heapCapacity(child.pid, out);
    child.stdin!.write("go\n");
    child.stdin!.flush();
    expect(await next()).toContain("done");
    const after = await heapCapacity(child.pid, out);

    // Idle: nothing collected, nothing allocated beyond the probe's own line (well under 1 MB).
    expect(idle1 - idle0).toBeLessThan(1 << 20);
    // Each object is a 16-byte cell header and five 8-byte fields: 56 bytes at least, 11.2 MB for
    // the lot (about 13 MB here). With the collector on, reused space keeps it near 7 MB.
    const grown = after - idle1;
    expect(grown).toBeGreaterThan(N * 56);
    expect(grown).toBeLessThan(N * 200);
  } finally {
    child.kill();
    await child.exited;
  }
});
