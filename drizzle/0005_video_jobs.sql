CREATE TABLE "video_idempotency" (
	"key_id" uuid NOT NULL,
	"idem_key" text NOT NULL,
	"body_hash" text NOT NULL,
	"state" text NOT NULL,
	"response_status" integer,
	"response_body" jsonb,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "video_idempotency_key_id_idem_key_pk" PRIMARY KEY("key_id","idem_key")
);
--> statement-breakpoint
CREATE TABLE "video_jobs" (
	"id" uuid PRIMARY KEY NOT NULL,
	"user_id" uuid NOT NULL,
	"key_id" uuid NOT NULL,
	"model" text NOT NULL,
	"family" text NOT NULL,
	"provider_id" text NOT NULL,
	"protocol" text NOT NULL,
	"upstream_model" text NOT NULL,
	"status" text DEFAULT 'processing' NOT NULL,
	"request" jsonb NOT NULL,
	"upstream_task" text,
	"upstream_status" text,
	"result_url" text,
	"cost_micro" bigint,
	"error" jsonb,
	"assets" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"billing" text NOT NULL,
	"hold_micro" bigint NOT NULL,
	"price_micro" bigint,
	"krw_per_1k_tokens" integer,
	"output_tokens" integer,
	"storage_key" text,
	"content_type" text,
	"content_size" bigint,
	"content_expires_at" timestamp with time zone,
	"content_deleted_at" timestamp with time zone,
	"poll_count" integer DEFAULT 0 NOT NULL,
	"error_count" integer DEFAULT 0 NOT NULL,
	"next_poll_at" timestamp with time zone NOT NULL,
	"lease_owner" text,
	"lease_until" timestamp with time zone,
	"deadline_at" timestamp with time zone NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	"finished_at" timestamp with time zone
);
--> statement-breakpoint
CREATE INDEX "video_idempotency_created_idx" ON "video_idempotency" USING btree ("created_at");--> statement-breakpoint
CREATE INDEX "video_jobs_due_idx" ON "video_jobs" USING btree ("next_poll_at") WHERE status = 'processing';--> statement-breakpoint
CREATE INDEX "video_jobs_key_idx" ON "video_jobs" USING btree ("key_id","created_at");--> statement-breakpoint
CREATE INDEX "video_jobs_content_idx" ON "video_jobs" USING btree ("content_expires_at") WHERE storage_key IS NOT NULL AND content_deleted_at IS NULL;