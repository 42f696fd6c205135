CREATE TABLE "response_cache" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"key_id" uuid NOT NULL,
	"request_hash" text NOT NULL,
	"model" text NOT NULL,
	"param_hash" text NOT NULL,
	"embedding" real[],
	"answer" jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	"hit_count" bigint DEFAULT 0 NOT NULL,
	"last_hit_at" timestamp with time zone
);
--> statement-breakpoint
CREATE UNIQUE INDEX "response_cache_key_request_uq" ON "response_cache" USING btree ("key_id","request_hash");--> statement-breakpoint
CREATE INDEX "response_cache_semantic_idx" ON "response_cache" USING btree ("key_id","model","param_hash","created_at");--> statement-breakpoint
CREATE INDEX "response_cache_expires_idx" ON "response_cache" USING btree ("expires_at");