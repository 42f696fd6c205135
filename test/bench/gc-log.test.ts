/** The bench's reader of JavaScriptCore's GC log, on lines a gateway under load printed. */
import { describe, expect, test } from "bun:test";
import { parseGcLog } from "../../bench/lib/gc-log";

const LOG = [
  "[GC<0x47215bf8118>: starting 0.032591ms]",
  "Requesting GC because bytes allocated this cycle: 8401731 exceed bytes allowed: 8388608 normal bytes: 8259267 oversized bytes: 142464 last oversized: 142464",
  "[GC<0x47215bf8118>: START M 8420kb => EdenCollection, a=0kb hf=0.000 mu=0.600 v=0kb (C:0 M:0 P1:0) o=0 b=0 i#1:N<CsMsrShDMsm(0)SrbBcs> 70+0 p=1.160354ms (max 1.160354)...]",
  "[GC<0x47215bf8118>: M a=118kb hf=0.036 mu=0.578 v=2269kb (C:584 M:0 P1:1687) o=3 b=207 0+207 p=0.041261ms (max 1.160354)...]",
  "[GC<0x47215bf8118>: M a=118kb hf=0.036 mu=0.578 v=4042kb (C:584 M:0 P1:3458) o=10 b=0 0+207 p=0.172803ms (max 1.160354)...]",
  "[GC<0x47215bf8118>: M a=130kb hf=0.040 mu=0.576 v=4264kb (C:603 M:0 P1:3661) o=10 b=17 i#2:N<WsOJw>Pbc 17+224 v=4269kb (C:605 M:0 P1:3663) o=12 b=17 i#3:P<OWs> 2+224 v=4269kb (C:606 M:0 P1:3663) o=12 b=17 i#4:P<WsOJwShMsrMsm(224)>Pbc 0+224 v=4284kb (C:620 M:0 P1:3664) o=12 b=17 i#5:P<Msm(0)CsSrbBcsSh> 15+0 v=4287kb (C:623 M:0 P1:3664) o=12 b=17 i#6:P<CsMsm(0)SrbBcsShMsrDCbDomoWsOJw>Pbc => 6101kb, p=1.671854ms (max 1.671854), cycle 7.087927ms END]",
  "GC END!",
  "[GC<0x47215bf8118>: epilogue 0.042452ms]",
  "[GC<0x47215bf8118>: START M 8838kb => EdenCollection, a=0kb hf=0.000 mu=0.600 v=0kb (C:0 M:0 P1:0) o=12 b=607 i#1:N<CsMsrShDMsm(614)SrbBcs> 28+614 v=219kb (C:113 M:0 P1:105) o=12 b=607 i#2:N<WsOJw>Pbc 2+0 v=219kb (C:113 M:0 P1:105) o=12 b=607 i#3:P<JwWsOMsm(0)ShCsSrbBcsMsrDCbDomo>Pbc => 6384kb, p=2.290623ms (max 2.290623), cycle 2.240263ms END]",
  "GC END!",
  "[GC<0x47215bf8118>: epilogue 0.014764ms]",
  "[GC<0x47215bf8118>: START M 8853kb => FullCollection, a=0kb hf=0.000 mu=0.600 v=0kb (C:0 M:0 P1:0) o=0 b=0 i#1:N<CsMsrShDMsm(0)SrbBcs> 939+0 p=5.426732ms (max 5.426732)...]",
  "[GC<0x47215bf8118>: M a=0kb hf=0.000 mu=0.600 v=4486kb (C:716 M:0 P1:3770) o=10 b=0 i#2:N<WsOJw>Pbc 29+0 v=4500kb (C:721 M:0 P1:3778) o=12 b=0 i#3:P<OWs> 0+0 v=4500kb (C:721 M:0 P1:3778) o=12 b=0 i#4:P<WsJwOShMsrSrbBcsCsMsm(0)DCbDomo>Pbc => 6450kb, p=2.260509ms (max 5.426732), cycle 64.741161ms END]",
  "GC END!",
].join("\n");

describe("GC log", () => {
  test("every pause counts, also those of a collection that spans several lines", () => {
    const w = parseGcLog(LOG);
    expect(w.collections).toBe(3);
    expect(w.full).toBe(1);
    // Eden: 1.160354, 0.041261, 0.172803, 1.671854; eden: 2.290623; full: 5.426732 and its last.
    expect(w.pausesMs.length).toBe(7);
    expect(w.pausesMs.slice(0, 5)).toEqual([1.160354, 0.041261, 0.172803, 1.671854, 2.290623]);
    expect(w.pausesMs).toContain(5.426732);
  });

  test("allocation is the heap's growth from one collection's end to the next one's start", () => {
    // The first ends at 6101 kb, the second starts at 8838 and ends at 6384, the third starts at 8853.
    expect(parseGcLog(LOG).allocatedKiB).toBe(8838 - 6101 + (8853 - 6384));
  });

  test("lines that are not a collection's are ignored", () => {
    expect(parseGcLog("Requesting GC because bytes allocated this cycle: 1\nGC END!\n")).toEqual({
      collections: 0,
      full: 0,
      pausesMs: [],
      allocatedKiB: 0,
      heaps: 0,
      allHeapsKiB: 0,
    });
  });

  test("a worker's heap, logged between the main heap's lines, is kept apart", () => {
    // A worker's collections (a small heap at another address) between the main heap's: read as
    // one heap, its 3 MB "after" would make the main heap's next start look like 5.8 MB allocated.
    const worker = (start: number, after: number, pause: number) =>
      `[GC<0x5aa00000118>: START M ${start}kb => EdenCollection, a=0kb hf=0.000 mu=0.600 v=0kb (C:0 M:0 P1:0) o=0 b=0 i#1:N<CsMsrShDMsm(0)SrbBcs> 0+0 v=1kb (C:1 M:0 P1:0) o=0 b=0 i#2:P<Ws>Pbc => ${after}kb, p=${pause}ms (max ${pause}), cycle 1ms END]`;
    const lines = LOG.split("\n");
    const mixed = [
      ...lines.slice(0, 6),
      worker(4000, 3000, 9.5),
      ...lines.slice(6, 9),
      worker(3900, 3100, 8.25),
      ...lines.slice(9),
    ];
    const w = parseGcLog(mixed.join("\n"));
    expect(w.heaps).toBe(2);
    expect(w.collections).toBe(3);
    expect(w.allocatedKiB).toBe(8838 - 6101 + (8853 - 6384));
    expect(w.allHeapsKiB).toBe(8838 - 6101 + (8853 - 6384) + (3900 - 3000));
    expect(w.pausesMs).not.toContain(9.5);
    expect(w.pausesMs).not.toContain(8.25);
    expect(w.pausesMs.length).toBe(7);
  });
});
