-- Responses-API storage (RESPONSES_STORE=on): each stored answer with the input that led to
-- it (item references and the previous_response_id chain already expanded, so a chain is
-- replayed from one row), and its output items by id for `item_reference` inputs. Ids are
-- unique per account only (a response id is built from a request id a client may choose).
CREATE TABLE "stored_responses" (
	"user_id" uuid NOT NULL,
	"id" text NOT NULL,
	"response" jsonb NOT NULL,
	"context" jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	CONSTRAINT "stored_responses_user_id_id_pk" PRIMARY KEY("user_id","id")
);
--> statement-breakpoint
CREATE INDEX "stored_responses_expires_idx" ON "stored_responses" USING btree ("expires_at");
--> statement-breakpoint
CREATE TABLE "stored_response_items" (
	"user_id" uuid NOT NULL,
	"id" text NOT NULL,
	"response_id" text NOT NULL,
	"item" jsonb NOT NULL,
	CONSTRAINT "stored_response_items_user_id_id_pk" PRIMARY KEY("user_id","id"),
	CONSTRAINT "stored_response_items_response_fk" FOREIGN KEY ("user_id","response_id") REFERENCES "stored_responses"("user_id","id") ON DELETE CASCADE
);
--> statement-breakpoint
CREATE INDEX "stored_response_items_response_idx" ON "stored_response_items" USING btree ("user_id","response_id");
