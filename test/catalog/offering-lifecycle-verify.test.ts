/**
 * Verification of an offering's own lifecycle (`deprecated_at`, `retires_at`, `successor` on an
 * `offerings[]` entry), the stages the gateway derives from it, and the shipped data: DeepSeek's
 * own `deepseek-chat` (deepseek-v3@deepseek) retired on 2026-07-24 while Together still serves
 * DeepSeek V3.
 */
import { describe, expect, test } from "bun:test";
import { verifyCatalog } from "../../src/core/catalog/verify";
import { getModel, getOffering, getOfferings } from "../../src/core/catalog/types";
import { modelDates, modelStage, offeringStage, withoutRetired } from "../../src/core/catalog/lifecycle";
import { resolveModel } from "../../src/core/catalog/resolve";
import { GatewayError } from "../../src/core/errors";
import { mutated, offering, snapshotOf } from "./helpers";

const problems = (edit: (d: any) => void) => {
  const r = verifyCatalog(mutated(edit));
  return r.ok ? [] : r.errors.map((e) => `${e.path}: ${e.message}`);
};
const at = (d: any, model: string, provider: string) =>
  `offerings[${d.offerings.indexOf(offering(d, model, provider))}]`;

describe("offering lifecycle fields", () => {
  test("the shipped catalog carries deepseek-v3@deepseek retired, naming DeepSeek's current model", () => {
    const s = snapshotOf();
    const o = getOffering(s, "deepseek-v3", "deepseek")!;
    expect([o.upstreamId, o.deprecatedAt, o.retiresAt, o.successor]).toEqual([
      "deepseek-chat",
      "2026-04-24",
      "2026-07-24",
      "deepseek-v4-flash@deepseek",
    ]);
    const together = getOffering(s, "deepseek-v3", "together")!;
    expect([together.retiresAt, together.successor]).toEqual([null, null]);
    const m = getModel(s, "deepseek-v3")!;
    expect(offeringStage(m, o, "2026-07-23")).toBe("deprecated");
    expect(offeringStage(m, o, "2026-07-24")).toBe("retired");
    expect(offeringStage(m, together, "2026-12-01")).toBe("active");
    // The model itself is still served (by Together).
    expect(modelStage(m, getOfferings(s, m.id), "2026-12-01")).toBe("active");
  });

  test("bad days, a retirement before the deprecation and bad successors are refused with their path", () => {
    let p = "";
    const out = problems((d) => {
      p = at(d, "llama-3.3-70b", "groq");
      Object.assign(offering(d, "llama-3.3-70b", "groq"), { deprecated_at: "2026-02-30" });
      Object.assign(offering(d, "llama-4-scout", "groq"), { deprecated_at: "2026-08-01", retires_at: "2026-07-17" });
      Object.assign(offering(d, "llama-4-maverick", "groq"), {
        retires_at: "2026-03-09",
        successor: "gpt-oss-20b@together",
      });
      Object.assign(offering(d, "llama-4-maverick", "together"), { retires_at: "2026-03-09", successor: "nope" });
      Object.assign(offering(d, "deepseek-v3", "together"), {
        retires_at: "2027-01-01",
        successor: "deepseek-v3@together",
      });
      Object.assign(offering(d, "llama-3.3-70b", "together"), { retires_at: "2027-01-01", successor: "kling-v3" });
    });
    const joined = out.join("\n");
    expect(joined).toContain(`${p}.deprecated_at: "2026-02-30" is not a calendar date`);
    expect(joined).toContain("retires_at 2026-07-17 is before deprecated_at 2026-08-01");
    expect(joined).toContain("no offering gpt-oss-20b@together");
    expect(joined).toContain('unknown model "nope"');
    expect(joined).toContain("an offering cannot be its own successor");
    expect(joined).toContain('"kling-v3" is not an active text leaf');
  });

  test("a successor must outlive the offering it replaces", () => {
    const out = problems((d) => {
      Object.assign(offering(d, "llama-3.3-70b", "groq"), {
        retires_at: "2026-08-16",
        successor: "llama-3.3-70b@together",
      });
      Object.assign(offering(d, "llama-3.3-70b", "together"), { retires_at: "2026-08-16" });
    });
    expect(out.join("\n")).toContain(
      "llama-3.3-70b@together retires on 2026-08-16, no later than llama-3.3-70b@groq itself",
    );
    // Its own model id is a successor only while another provider serves the model past that day.
    expect(
      problems((d) =>
        Object.assign(offering(d, "llama-3.3-70b", "groq"), { retires_at: "2026-08-16", successor: "llama-3.3-70b" }),
      ),
    ).toEqual([]);
    expect(
      problems((d) =>
        Object.assign(offering(d, "llama-3.1-8b", "groq"), { retires_at: "2026-08-16", successor: "llama-3.1-8b" }),
      ).join("\n"),
    ).toContain('"llama-3.1-8b" has no offering served past llama-3.1-8b@groq');
    expect(
      problems((d) => Object.assign(offering(d, "llama-3.1-8b", "groq"), { successor: "gpt-oss-120b@groq" })),
    ).toEqual([]);
  });

  test("unknown fields on an offering are still refused (the schema stays strict)", () => {
    expect(
      problems((d) => Object.assign(offering(d, "deepseek-v3", "deepseek"), { retired_at: "2026-07-24" })).length,
    ).toBeGreaterThan(0);
  });
});

describe("resolution with retired offerings", () => {
  const port = (simulated: string[] = []) => ({
    today: () => "2026-12-01",
    simulated: (o: any) => simulated.includes(o.providerId),
  });

  test("the model keeps its other providers; a pin is refused naming the offering's successor", () => {
    const s = snapshotOf();
    const leaf: any = withoutRetired(resolveModel(s, "deepseek-v3"), port());
    expect(leaf.offerings.map((o: any) => o.providerId)).toEqual(["together"]);
    let err: unknown;
    try {
      withoutRetired(resolveModel(s, "deepseek-v3@deepseek"), port());
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(GatewayError);
    expect((err as GatewayError).errorCode).toBe("model_retired");
    expect((err as GatewayError).status).toBe(400);
    expect((err as GatewayError).messageEn).toBe(
      "The model 'deepseek-v3@deepseek' was retired on 2026-07-24. Use 'deepseek-v4-flash@deepseek' instead.",
    );
    expect((err as GatewayError).extras).toEqual({ suggestions: ["deepseek-v4-flash@deepseek"] });
    // Where the simulator serves it, it stays.
    const sim: any = withoutRetired(resolveModel(s, "deepseek-v3@deepseek"), port(["deepseek"]));
    expect(sim.offerings.map((o: any) => o.providerId)).toEqual(["deepseek"]);
  });

  test("a model whose every offering is retired is retired, with the last one's day and successor", () => {
    const s = snapshotOf(
      mutated((d) => {
        Object.assign(offering(d, "llama-4-scout", "groq"), {
          retires_at: "2026-07-17",
          successor: "gpt-oss-120b@groq",
        });
        Object.assign(offering(d, "llama-4-scout", "together"), {
          retires_at: "2026-10-01",
          successor: "llama-4-maverick",
        });
      }),
    );
    const m = getModel(s, "llama-4-scout")!;
    expect(modelStage(m, getOfferings(s, m.id), "2026-12-01")).toBe("retired");
    expect(modelStage(m, getOfferings(s, m.id), "2026-09-01")).toBe("active");
    expect(modelDates(m, getOfferings(s, m.id))).toEqual({
      deprecatedAt: "2026-07-17",
      retiresAt: "2026-10-01",
      successor: "llama-4-maverick",
    });
    expect(() => withoutRetired(resolveModel(s, "llama-4-scout"), port())).toThrow("2026-10-01");
  });
});
