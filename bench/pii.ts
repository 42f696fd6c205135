/**
 * PII masking cost per KB of prompt: `bun bench/pii.ts`.
 * Inputs: prose without PII (no candidates at all) in English (one-byte string) and mixed
 * Korean/English (two-byte string, which the regex engine scans more slowly); text without
 * PII but dense with numbers that reach the matchers (dates, versions, prices, order ids);
 * and a PII-heavy text (about 44 findings per KB, far more than real prompts).
 */
import { findPii } from "../src/lib/pii/detect";
import { PiiMasker } from "../src/lib/pii/mask";

function repeatTo(unit: string, bytes: number): string {
  let s = "";
  while (s.length < bytes) s += unit;
  return s;
}

const english =
  "Please summarise the following meeting notes and list the action items for each team. " +
  "The release is planned for the third quarter, and the budget review happens next week. " +
  "function add(a, b) { return a + b; } // a helper that the reviewers asked about\n";
const mixed =
  "Please summarise the following meeting notes and list the action items for each team. " +
  "다음 회의록을 요약하고 팀별 후속 조치를 정리해 주세요. The release is planned for Q3, " +
  "and the budget review happens next week. function add(a, b) { return a + b; } // helper\n";
const numeric =
  "Release 2.14.3 shipped on 2024-01-15 at 10:30; build 20240115 took 42 s. Invoice total " +
  "₩1,234,567 (order 2024-0115-3382, ref 12345678), see v1.2.3.4 on 192.168.100.200. ";
const heavy =
  "Contact hong.gildong@example.co.kr or 010-1234-5678 (office 02-123-4567, +1 415 555 0100). " +
  "RRN 900101-1234567, card 4111 1111 1111 1111, passport M12345678. 메일 kim@test.kr 로 회신. ";

/** Best of several rounds: the minimum is the least disturbed by GC and other processes. */
function bench(name: string, text: string): void {
  const iters = Math.max(20, Math.floor(4_000_000 / text.length));
  let sink = 0;
  for (let i = 0; i < 200; i++) sink += new PiiMasker().mask(text).length; // warm up the JIT
  let best = Infinity;
  for (let round = 0; round < 9; round++) {
    const t0 = Bun.nanoseconds();
    for (let i = 0; i < iters; i++) sink += new PiiMasker().mask(text).length;
    best = Math.min(best, (Bun.nanoseconds() - t0) / iters);
  }
  const kb = Buffer.byteLength(text) / 1024;
  const findings = findPii(text).length / kb;
  console.log(
    `${name.padEnd(18)} ${kb.toFixed(1).padStart(5)} KB  ${(best / kb).toFixed(0).padStart(6)} ns/KB  ` +
      `${(best / 1000).toFixed(1).padStart(7)} µs/text  ${findings.toFixed(0).padStart(3)} findings/KB${sink < 0 ? "!" : ""}`,
  );
}

for (const size of [1024, 16 * 1024]) {
  bench(`no PII (English)`, repeatTo(english, size));
  bench(`no PII (Korean)`, repeatTo(mixed, size));
  bench(`no PII (numbers)`, repeatTo(numeric, size));
  bench(`PII-heavy`, repeatTo(heavy, size));
}
