/** The payment provider settings that belong together (docs/payments.md), checked at boot. */
export function paymentProblems(v: Record<string, unknown>): string[] {
  const out: string[] = [];
  const provider = v.PAYMENTS_PROVIDER;
  if (provider === "toss") {
    for (const k of ["TOSS_CLIENT_KEY", "TOSS_SECRET_KEY"])
      if (!v[k]) out.push(`${k}: required with PAYMENTS_PROVIDER=toss`);
  }
  if (provider === "stripe") {
    for (const k of ["STRIPE_SECRET_KEY", "STRIPE_WEBHOOK_SECRET"])
      if (!v[k]) out.push(`${k}: required with PAYMENTS_PROVIDER=stripe`);
  }
  if (provider === "sim") {
    // The simulator's money is not real: never outside demo mode or an explicit SIMULATOR=on.
    const demo = v.DEMO_MODE ?? !v.DATABASE_URL;
    const sim = v.SIMULATOR ?? demo;
    if (!sim) out.push("PAYMENTS_PROVIDER: sim needs the simulator (demo mode or SIMULATOR=on)");
  }
  return out;
}

/** The provider in use: the configured one, else the simulator's while the simulator is on, else none. */
export function paymentsProvider(cfg: {
  PAYMENTS_PROVIDER?: string;
  simulator: boolean;
}): "toss" | "stripe" | "sim" | null {
  const p = cfg.PAYMENTS_PROVIDER ?? (cfg.simulator ? "sim" : "none");
  return p === "none" ? null : (p as "toss" | "stripe" | "sim");
}
