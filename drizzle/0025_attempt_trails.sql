-- The attempt trail of a call that needed more than one upstream attempt (retries, fallbacks,
-- a hedge's race, a continued stream) or whose only attempt failed: each attempt's provider,
-- model, outcome, reason, upstream status and time, as the request's log line has them. The
-- console's activity detail shows it next to the call's policy decision (issue 31 E). Kept
-- apart from usage_events so the ledger's functions, which write those, stay as they are; a
-- call answered at the first try has no row (its usage event says everything).
CREATE TABLE "attempt_trails" (
	"request_id" uuid PRIMARY KEY NOT NULL,
	"user_id" uuid NOT NULL,
	"attempts" jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE INDEX "attempt_trails_user_idx" ON "attempt_trails" USING btree ("user_id","created_at");
