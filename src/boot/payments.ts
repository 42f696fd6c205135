/**
 * The payments module from the configuration (docs/payments.md): the provider PAYMENTS_PROVIDER
 * names (or the simulator's while the simulator is on, or none), its billing service and routes,
 * and the page sources its checkout needs on the console.
 */
import { createHmac } from "node:crypto";
import { Elysia } from "elysia";
import type { Config } from "../config";
import { paymentsProvider } from "../config/payments";
import type { Database } from "../db/client";
import { PaymentRepo } from "../db/repos/payments";
import { PaymentService } from "../core/payments/service";
import type { PaymentProvider } from "../core/payments/port";
import { TossProvider } from "../providers/payments/toss";
import { StripeProvider } from "../providers/payments/stripe";
import { SimPaymentProvider } from "../providers/payments/sim";
import type { Simulator } from "../sim";
import { billingRoutes } from "../http/routes/billing";
import { billingAutoRoutes } from "../http/routes/billing-auto";
import { log } from "../lib/log";
import type { AppDeps } from "../http/deps";

/** After a claimed auto top-up, how long before the same account may be tried again. */
const AUTO_TOPUP_RETRY_SECONDS = 600;

/** Whether the payments need the in-process simulator. */
export const paymentsNeedSimulator = (cfg: Config) => paymentsProvider(cfg) === "sim";

export function providerOf(cfg: Config, sim: Simulator | null): PaymentProvider | null {
  switch (paymentsProvider(cfg)) {
    case "toss":
      return new TossProvider({
        clientKey: cfg.TOSS_CLIENT_KEY!,
        secretKey: cfg.TOSS_SECRET_KEY!,
        apiBase: cfg.TOSS_API_BASE,
      });
    case "stripe":
      return new StripeProvider({
        secretKey: cfg.STRIPE_SECRET_KEY!,
        webhookSecret: cfg.STRIPE_WEBHOOK_SECRET!,
        apiBase: cfg.STRIPE_API_BASE,
      });
    case "sim":
      return sim ? new SimPaymentProvider(sim.baseUrl("payments")) : null;
    default:
      return null;
  }
}

export type PaymentsModule = ReturnType<typeof paymentsModule>;

export function paymentsModule(cfg: Config, db: Database, jwtSecret: string, sim: Simulator | null) {
  const provider = providerOf(cfg, sim);
  // The provider's customer id: stable per account, opaque (neither the email nor the user id).
  const customerKey = (userId: string) =>
    `c_${createHmac("sha256", jwtSecret).update(`customer:${userId}`).digest("hex").slice(0, 40)}`;
  const service = new PaymentService(provider, new PaymentRepo(db), customerKey);
  // The auto top-up job: accounts under their threshold are claimed in SQL, so any number of
  // instances may run it; a claim waits AUTO_TOPUP_RETRY_SECONDS before the next try.
  const job =
    provider?.savedCards && cfg.AUTO_TOPUP_INTERVAL_MS > 0
      ? setInterval(() => {
          service
            .runAutoTopups(AUTO_TOPUP_RETRY_SECONDS)
            .catch((e) => log.warn("auto top-up pass failed", { error: e }));
        }, cfg.AUTO_TOPUP_INTERVAL_MS)
      : null;
  job?.unref?.();
  return {
    service,
    pageSources: provider?.pageSources,
    routes: (deps: AppDeps) =>
      new Elysia({ name: "payments" }).use(billingRoutes(deps, service)).use(billingAutoRoutes(deps, service)),
    stop: () => {
      if (job) clearInterval(job);
    },
  };
}
