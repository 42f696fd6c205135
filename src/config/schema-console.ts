/**
 * The settings of the console's sessions (docs/console.md, "Sessions") and of self-service
 * credits (docs/payments.md), spread into the environment's schema (./schema.ts).
 */
import { Type as T } from "@sinclair/typebox";
import { Int } from "./schema-kinds";

export const CONSOLE_SETTINGS = {
  SESSION_ACCESS_TTL_SECONDS: Int(
    2,
    3600,
    300,
    "Lifetime of the access token a console session (refresh cookie) hands out; the console refreshes it in memory",
  ),
  SESSION_IDLE_SECONDS: Int(
    60,
    365 * 86400,
    7 * 86400,
    "A console session unused this long ends (each refresh moves it on)",
  ),
  SESSION_MAX_SECONDS: Int(
    60,
    365 * 86400,
    30 * 86400,
    "A console sign-in lasts at most this long, however often it is refreshed",
  ),
  PAYMENTS_PROVIDER: T.Optional(
    T.Union([T.Literal("toss"), T.Literal("stripe"), T.Literal("sim"), T.Literal("none")], {
      description:
        "Self-service top-ups on /billing (docs/payments.md): toss (Toss Payments), stripe (Stripe Checkout), sim (the built-in simulator's provider; demo mode and SIMULATOR=on only) or none (top-ups by the operator only). Default: sim while the simulator is on, else none",
    }),
  ),
  TOSS_CLIENT_KEY: T.Optional(
    T.String({
      minLength: 1,
      description: "Toss Payments client key (`test_gck_…`/`live_gck_…`), drawn into the payment widget",
    }),
  ),
  TOSS_SECRET_KEY: T.Optional(
    T.String({
      minLength: 1,
      description: "Toss Payments secret key (`test_gsk_…`/`live_gsk_…`): confirms and reads back payments",
    }),
  ),
  TOSS_API_BASE: T.Optional(
    T.String({
      pattern: "^https?://",
      description: "Toss Payments API base URL (default https://api.tosspayments.com; tests)",
    }),
  ),
  STRIPE_SECRET_KEY: T.Optional(
    T.String({ minLength: 1, description: "Stripe secret key (`sk_test_…`/`sk_live_…`, or a restricted key)" }),
  ),
  STRIPE_WEBHOOK_SECRET: T.Optional(
    T.String({
      minLength: 1,
      description: "Signing secret (`whsec_…`) of the Stripe webhook endpoint /v1/billing/webhooks/stripe",
    }),
  ),
  STRIPE_API_BASE: T.Optional(
    T.String({ pattern: "^https?://", description: "Stripe API base URL (default https://api.stripe.com; tests)" }),
  ),
  AUTO_TOPUP_INTERVAL_MS: Int(
    0,
    3_600_000,
    30_000,
    "How often this instance looks for accounts whose auto top-up is due (free credit under their threshold) and charges their saved card (0 = this instance runs no auto top-up job)",
  ),
  PUBLIC_URL: T.Optional(
    T.String({
      pattern: "^https?://[^/]+$",
      description:
        "The gateway's public origin (https://gateway.example.com), for the payment providers' return and webhook addresses (default: the origin the checkout was asked from)",
    }),
  ),
};
