/**
 * The ledger's month (currentMonth): formatted once per month from the clock, it must still turn
 * at the first millisecond of the next UTC month, and follow a clock set back.
 */
import { afterEach, expect, setSystemTime, test } from "bun:test";
import { currentMonth } from "../../src/core/billing/ledger";

afterEach(() => setSystemTime());

test("the month turns at the UTC month boundary, both ways", () => {
  setSystemTime(new Date("2026-01-31T23:59:59.999Z"));
  expect(currentMonth()).toBe("2026-01");
  setSystemTime(new Date("2026-02-01T00:00:00.000Z"));
  expect(currentMonth()).toBe("2026-02");
  setSystemTime(new Date("2025-12-31T23:59:59.999Z"));
  expect(currentMonth()).toBe("2025-12");
  setSystemTime(new Date("2026-12-01T00:00:00.000Z"));
  expect(currentMonth()).toBe("2026-12");
  expect(currentMonth(new Date("2027-03-15T12:00:00Z"))).toBe("2027-03");
});
