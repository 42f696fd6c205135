CREATE TABLE "response_feedback" (
	"request_id" uuid PRIMARY KEY NOT NULL,
	"user_id" uuid NOT NULL,
	"rating" smallint NOT NULL,
	"comment" text,
	"category" text,
	"model" text NOT NULL,
	"provider" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "response_feedback_rating_check" CHECK ("response_feedback"."rating" between -1 and 1)
);
--> statement-breakpoint
CREATE INDEX "response_feedback_model_idx" ON "response_feedback" USING btree ("model","updated_at");--> statement-breakpoint
CREATE INDEX "response_feedback_user_idx" ON "response_feedback" USING btree ("user_id","updated_at");