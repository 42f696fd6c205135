-- Stored responses belong to the key that made them (issue 28 #9): another key of the account,
-- a child key included, no longer reads, deletes or continues them. Rows kept before this
-- migration get the key of their call's usage event (a gateway-chosen request id maps straight
-- back to it); a row whose key cannot be found (its client named the request id) is deleted,
-- since no key could read it and it would only hold prompt text until it expired.
--
-- Their size is bounded (issue 28 #8): each row carries its bytes, and the input items that led
-- to an answer are kept once per account and content (stored_response_contexts, keyed by a
-- SHA-256 of the items), so a response-cache hit, or any call repeating an input, adds its
-- answer only. A context lives as long as the longest-lived response that names it.
CREATE TABLE "stored_response_contexts" (
	"user_id" uuid NOT NULL,
	"hash" text NOT NULL,
	"context" jsonb NOT NULL,
	"bytes" integer NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	CONSTRAINT "stored_response_contexts_pk" PRIMARY KEY("user_id","hash")
);
--> statement-breakpoint
CREATE INDEX "stored_response_contexts_expires_idx" ON "stored_response_contexts" USING btree ("expires_at");
--> statement-breakpoint
ALTER TABLE "stored_responses" ADD COLUMN "key_id" uuid;
--> statement-breakpoint
ALTER TABLE "stored_responses" ADD COLUMN "context_hash" text;
--> statement-breakpoint
ALTER TABLE "stored_responses" ADD COLUMN "bytes" integer DEFAULT 0 NOT NULL;
--> statement-breakpoint
UPDATE "stored_responses" r SET "key_id" = u."key_id"
  FROM "usage_events" u
 WHERE u."user_id" = r."user_id"
   AND r."id" ~ '^resp_[0-9a-f]{32}$'
   AND u."request_id" = regexp_replace(substr(r."id", 6), '^(.{8})(.{4})(.{4})(.{4})(.{12})$', '\1-\2-\3-\4-\5')::uuid;
--> statement-breakpoint
DELETE FROM "stored_responses" WHERE "key_id" IS NULL;
--> statement-breakpoint
UPDATE "stored_responses" SET
  "context_hash" = encode(sha256(convert_to("context"::text, 'UTF8')), 'hex'),
  "bytes" = octet_length("response"::text);
--> statement-breakpoint
INSERT INTO "stored_response_contexts" ("user_id", "hash", "context", "bytes", "expires_at")
SELECT DISTINCT ON ("user_id", "context_hash") "user_id", "context_hash", "context", octet_length("context"::text),
       max("expires_at") OVER (PARTITION BY "user_id", "context_hash")
  FROM "stored_responses"
 ORDER BY "user_id", "context_hash";
--> statement-breakpoint
ALTER TABLE "stored_responses" DROP COLUMN "context";
--> statement-breakpoint
ALTER TABLE "stored_responses" ALTER COLUMN "key_id" SET NOT NULL;
--> statement-breakpoint
ALTER TABLE "stored_responses" ALTER COLUMN "context_hash" SET NOT NULL;
