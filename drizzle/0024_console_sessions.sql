-- Console sessions that survive a reload (issue 31 B). One row per sign-in (a refresh-token
-- family): the cookie holds `<id>.<secret>` and only the SHA-256 of the family's current
-- secret is stored. Each refresh replaces it (rotation); a secret of this family that is not
-- the current one is a rotated token used again, and revokes the family. One row per family,
-- whatever the number of refreshes. Rows of ended families are deleted as the account signs in again.
CREATE TABLE "console_sessions" (
	"id" uuid PRIMARY KEY NOT NULL,
	"user_id" uuid NOT NULL,
	"token_hash" text NOT NULL,
	"rotations" integer DEFAULT 0 NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"refreshed_at" timestamp with time zone DEFAULT now() NOT NULL,
	"idle_expires_at" timestamp with time zone NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	"revoked_at" timestamp with time zone,
	"revoked_reason" text,
	CONSTRAINT "console_sessions_user_fk" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE
);
--> statement-breakpoint
CREATE INDEX "console_sessions_user_idx" ON "console_sessions" USING btree ("user_id");
