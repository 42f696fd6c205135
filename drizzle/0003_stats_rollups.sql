CREATE TABLE "stats_app_daily" (
	"bucket" timestamp with time zone NOT NULL,
	"app" text NOT NULL,
	"modality" text NOT NULL,
	"success" boolean NOT NULL,
	"calls" bigint DEFAULT 0 NOT NULL,
	"cache_hits" bigint DEFAULT 0 NOT NULL,
	"prompt_tokens" bigint DEFAULT 0 NOT NULL,
	"completion_tokens" bigint DEFAULT 0 NOT NULL,
	CONSTRAINT "stats_app_daily_bucket_app_modality_success_pk" PRIMARY KEY("bucket","app","modality","success")
);
--> statement-breakpoint
CREATE TABLE "stats_app_hourly" (
	"bucket" timestamp with time zone NOT NULL,
	"app" text NOT NULL,
	"modality" text NOT NULL,
	"success" boolean NOT NULL,
	"calls" bigint DEFAULT 0 NOT NULL,
	"cache_hits" bigint DEFAULT 0 NOT NULL,
	"prompt_tokens" bigint DEFAULT 0 NOT NULL,
	"completion_tokens" bigint DEFAULT 0 NOT NULL,
	CONSTRAINT "stats_app_hourly_bucket_app_modality_success_pk" PRIMARY KEY("bucket","app","modality","success")
);
--> statement-breakpoint
CREATE TABLE "stats_daily_keys" (
	"bucket" timestamp with time zone NOT NULL,
	"dim" text NOT NULL,
	"name" text NOT NULL,
	"key_id" uuid NOT NULL,
	CONSTRAINT "stats_daily_keys_bucket_dim_name_key_id_pk" PRIMARY KEY("bucket","dim","name","key_id")
);
--> statement-breakpoint
CREATE TABLE "stats_hourly_keys" (
	"bucket" timestamp with time zone NOT NULL,
	"dim" text NOT NULL,
	"name" text NOT NULL,
	"key_id" uuid NOT NULL,
	CONSTRAINT "stats_hourly_keys_bucket_dim_name_key_id_pk" PRIMARY KEY("bucket","dim","name","key_id")
);
--> statement-breakpoint
CREATE TABLE "stats_model_daily" (
	"bucket" timestamp with time zone NOT NULL,
	"model" text NOT NULL,
	"provider" text NOT NULL,
	"maker" text NOT NULL,
	"modality" text NOT NULL,
	"success" boolean NOT NULL,
	"calls" bigint DEFAULT 0 NOT NULL,
	"cache_hits" bigint DEFAULT 0 NOT NULL,
	"prompt_tokens" bigint DEFAULT 0 NOT NULL,
	"completion_tokens" bigint DEFAULT 0 NOT NULL,
	"cost_micro" bigint DEFAULT 0 NOT NULL,
	CONSTRAINT "stats_model_daily_bucket_model_provider_maker_modality_success_pk" PRIMARY KEY("bucket","model","provider","maker","modality","success")
);
--> statement-breakpoint
CREATE TABLE "stats_model_hourly" (
	"bucket" timestamp with time zone NOT NULL,
	"model" text NOT NULL,
	"provider" text NOT NULL,
	"maker" text NOT NULL,
	"modality" text NOT NULL,
	"success" boolean NOT NULL,
	"calls" bigint DEFAULT 0 NOT NULL,
	"cache_hits" bigint DEFAULT 0 NOT NULL,
	"prompt_tokens" bigint DEFAULT 0 NOT NULL,
	"completion_tokens" bigint DEFAULT 0 NOT NULL,
	"cost_micro" bigint DEFAULT 0 NOT NULL,
	CONSTRAINT "stats_model_hourly_bucket_model_provider_maker_modality_success_pk" PRIMARY KEY("bucket","model","provider","maker","modality","success")
);
--> statement-breakpoint
CREATE TABLE "stats_rollup_state" (
	"id" smallint PRIMARY KEY NOT NULL,
	"watermark" bigint DEFAULT 0 NOT NULL,
	"holes" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"version" bigint DEFAULT 0 NOT NULL,
	"events_folded" bigint DEFAULT 0 NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	"pruned_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "usage_daily" (
	"user_id" uuid NOT NULL,
	"day" date NOT NULL,
	"model" text NOT NULL,
	"requests" bigint DEFAULT 0 NOT NULL,
	"failed_requests" bigint DEFAULT 0 NOT NULL,
	"cache_hits" bigint DEFAULT 0 NOT NULL,
	"prompt_tokens" bigint DEFAULT 0 NOT NULL,
	"completion_tokens" bigint DEFAULT 0 NOT NULL,
	"cost_micro" bigint DEFAULT 0 NOT NULL,
	CONSTRAINT "usage_daily_user_id_day_model_pk" PRIMARY KEY("user_id","day","model")
);
