-- The public statistics' privacy threshold counts distinct accounts, not keys (keys are free to
-- mint: one account with N keys must not be enough to name a model or an app). The capped key
-- sets become capped account sets. They are seeded from the key sets through each key's owner:
-- a capped key set maps to at most as many accounts as really used the name, so a name can only
-- be hidden more than it should until new traffic tops its sets up, never shown more.
CREATE TABLE "stats_hourly_accounts" (
	"bucket" timestamp with time zone NOT NULL,
	"dim" text NOT NULL,
	"name" text NOT NULL,
	"account_id" uuid NOT NULL,
	CONSTRAINT "stats_hourly_accounts_bucket_dim_name_account_id_pk" PRIMARY KEY("bucket","dim","name","account_id")
);
--> statement-breakpoint
CREATE TABLE "stats_daily_accounts" (
	"bucket" timestamp with time zone NOT NULL,
	"dim" text NOT NULL,
	"name" text NOT NULL,
	"account_id" uuid NOT NULL,
	CONSTRAINT "stats_daily_accounts_bucket_dim_name_account_id_pk" PRIMARY KEY("bucket","dim","name","account_id")
);
--> statement-breakpoint
INSERT INTO "stats_hourly_accounts" ("bucket", "dim", "name", "account_id")
SELECT DISTINCT s."bucket", s."dim", s."name", k."user_id" FROM "stats_hourly_keys" s JOIN "api_keys" k ON k."id" = s."key_id"
ON CONFLICT DO NOTHING;
--> statement-breakpoint
INSERT INTO "stats_daily_accounts" ("bucket", "dim", "name", "account_id")
SELECT DISTINCT s."bucket", s."dim", s."name", k."user_id" FROM "stats_daily_keys" s JOIN "api_keys" k ON k."id" = s."key_id"
ON CONFLICT DO NOTHING;
--> statement-breakpoint
DROP TABLE "stats_hourly_keys";
--> statement-breakpoint
DROP TABLE "stats_daily_keys";
